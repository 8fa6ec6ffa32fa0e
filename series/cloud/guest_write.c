// SPDX-License-Identifier: GPL-2.0
/*
 * The real cloud's guest: writes to a disk that do not go through the
 * guest kernel's read-only check (series/cloud/guest.py builds it for the
 * guest's kernel and puts it in the initramfs).
 *
 * A write(2) to a disk the kernel marks read-only fails in the kernel
 * (EPERM) and never reaches the hypervisor. A bio submitted here passes:
 * the block layer only warns ("Trying to write to read-only
 * block-device"). The hypervisor then either writes the sector or fails
 * the request (EIO).
 *
 * The guest loads the module once, at boot. Each write to its parameter
 * (/sys/module/guest_write/parameters/write, "PATH SECTOR TAG MARKER")
 * is one attempt: the module writes MARKER to SECTOR of PATH and prints
 *
 *     guest-bypass tag=TAG result=ERRNO
 *
 * (0 when the hypervisor wrote the sector). The module is not loaded
 * and unloaded for each attempt: the guest kernel's path for a module
 * whose init fails oopsed once in ftrace_release_mod.
 */

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#define FIELD_CHARS 64

static int write_sector(const char *path, unsigned long sector,
			const char *marker)
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

static int write_set(const char *value, const struct kernel_param *kp)
{
	char path[FIELD_CHARS], tag[FIELD_CHARS];
	char *marker;
	unsigned long sector;
	int end = 0;

	if (sscanf(value, "%63s %lu %63s %n", path, &sector, tag, &end) != 3 ||
	    !end)
		return -EINVAL;
	marker = kstrndup(value + end, SECTOR_SIZE - 1, GFP_KERNEL);
	if (!marker)
		return -ENOMEM;
	strim(marker);
	pr_info("guest-bypass tag=%s result=%d\n", tag,
		write_sector(path, sector, marker));
	kfree(marker);
	return 0;
}

static const struct kernel_param_ops write_ops = {
	.set = write_set,
};
module_param_cb(write, &write_ops, NULL, 0200);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Writes below the guest kernel's read-only check");
