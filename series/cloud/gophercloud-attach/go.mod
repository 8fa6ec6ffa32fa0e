module volume-multiattach.invalid/gophercloud-attach

go 1.25.0

require github.com/gophercloud/gophercloud/v2 v2.16.0

// The gophercloud series' work tree (tools/series apply gophercloud), in
// place of the release: the replace directive a Go user of the series
// writes, with the path of their patched tree.
replace github.com/gophercloud/gophercloud/v2 => ../../../.work/trees/gophercloud
