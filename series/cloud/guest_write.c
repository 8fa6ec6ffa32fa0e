// SPDX-License-Identifier: GPL-2.0
/*
 * The real cloud's guest: one write to a disk that does not go through
 * the guest kernel's read-only check (series/cloud/guest.py builds it for the
 * guest's kernel and puts it in the initramfs).
 *
 * A write(2) to a disk the kernel marks read-only fails in the kernel
 * (EPERM) and never reaches the hypervisor. A bio submitted here passes:
 * the block layer only warns ("Trying to write to read-only
 * block-device"). The hypervisor then either writes the sector or fails
 * the request (EIO). Each insmod is one attempt: the module prints
 *
 *     guest-bypass tag=TAG result=ERRNO
 *
 * (0 when the hypervisor wrote the sector) and its init fails, so it is
 * never left loaded.
 */

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/string.h>

static char *path = "";
static unsigned long sector;
static char *marker = "";
static char *tag = "";
module_param(path, charp, 0);
module_param(sector, ulong, 0);
module_param(marker, charp, 0);
module_param(tag, charp, 0);

static int write_sector(void)
{
	struct block_device *bdev;
	struct page *page;
	struct bio *bio;
	int result;

	/* Opened for reading: a read-only disk refuses an open for
	 * writing; the bio below is a write all the same. */
	bdev = blkdev_get_by_path(path, FMODE_READ, NULL);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!page) {
		blkdev_put(bdev, FMODE_READ);
		return -ENOMEM;
	}
	strscpy(page_address(page), marker, SECTOR_SIZE);
	bio = bio_alloc(bdev, 1, REQ_OP_WRITE | REQ_SYNC | REQ_FUA,
			GFP_KERNEL);
	bio->bi_iter.bi_sector = sector;
	__bio_add_page(bio, page, SECTOR_SIZE, 0);
	result = submit_bio_wait(bio);
	bio_put(bio);
	__free_page(page);
	blkdev_put(bdev, FMODE_READ);
	return result;
}

static int __init guest_write_init(void)
{
	pr_info("guest-bypass tag=%s result=%d\n", tag, write_sector());
	return -ECANCELED;
}

module_init(guest_write_init);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("One write below the guest kernel's read-only check");
