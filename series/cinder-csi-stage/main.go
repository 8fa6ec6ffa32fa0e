// Command cinder-csi-stage stages and publishes a volume with cinder-csi's
// node service on a block device of this machine, as the kubelet asks it
// to (NodeStageVolume, then NodePublishVolume), and prints what the kernel
// then holds as a line of JSON: each call's gRPC code, the options of the
// staging and published mounts, and whether a write to the published path
// lands. It unpublishes and unstages before it exits.
//
// Usage:
//
//	cinder-csi-stage -device /dev/loopN -access-mode MODE [-published-read-only] -directory DIR
//
// With -published-read-only, the publish context says what the controller
// says of a volume it attached read-only ("ReadOnly": "true"), as for a
// PersistentVolume with spec.csi.readOnly.
//
// It is built in a Go workspace with cloud-provider-openstack's work tree
// (tools/series), whose node service stands in for the one the kubelet
// calls. The node service finds the volume's device by its id on a Nova
// server; here it is given the device.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/status"
	"k8s.io/cloud-provider-openstack/pkg/csi/cinder"
	"k8s.io/cloud-provider-openstack/pkg/csi/cinder/openstack"
	"k8s.io/cloud-provider-openstack/pkg/util/mount"
)

// volumeID names the volume in the calls; the device is found by it.
const volumeID = "loop-volume"

// deviceMount is the node service's mount provider, with the volume on a
// device given rather than found among the server's disks.
type deviceMount struct {
	mount.IMount
	device string
}

func (m deviceMount) GetDevicePath(string) (string, error) {
	return m.device, nil
}

type outcome struct {
	Stage          string `json:"stage"`
	StageMessage   string `json:"stage_message,omitempty"`
	Publish        string `json:"publish,omitempty"`
	PublishMessage string `json:"publish_message,omitempty"`
	StagingOptions string `json:"staging_options,omitempty"`
	TargetOptions  string `json:"target_options,omitempty"`
	Write          string `json:"write,omitempty"`
	Unpublish      string `json:"unpublish,omitempty"`
	Unstage        string `json:"unstage,omitempty"`
}

func code(err error) string {
	return status.Code(err).String()
}

// mountOptions returns the options the kernel lists for the mount at path,
// "" if nothing is mounted there.
func mountOptions(path string) (string, error) {
	mounts, err := os.Open("/proc/self/mounts")
	if err != nil {
		return "", err
	}
	defer mounts.Close()
	options := ""
	lines := bufio.NewScanner(mounts)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) >= 4 && fields[1] == path {
			options = fields[3]
		}
	}
	return options, lines.Err()
}

func stage(device, accessMode string, publishedReadOnly bool, directory string) (outcome, error) {
	mode, ok := csi.VolumeCapability_AccessMode_Mode_value[accessMode]
	if !ok {
		return outcome{}, fmt.Errorf("unknown access mode %q", accessMode)
	}
	capability := &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: "ext4"}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_Mode(mode)},
	}
	publishContext := map[string]string{"DevicePath": device}
	if publishedReadOnly {
		publishContext["ReadOnly"] = "true"
	}
	staging := filepath.Join(directory, "staging")
	target := filepath.Join(directory, "target")
	driver := cinder.NewDriver(&cinder.DriverOpts{Endpoint: "unix://" + filepath.Join(directory, "unused.sock"), ClusterID: "stage"})
	node := cinder.NewNodeServer(driver, deviceMount{mount.GetMountProvider(), device}, nil, openstack.BlockStorageOpts{}, map[string]string{})
	ctx := context.Background()

	var o outcome
	_, err := node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{
		VolumeId: volumeID, PublishContext: publishContext, StagingTargetPath: staging, VolumeCapability: capability,
	})
	o.Stage, o.StageMessage = code(err), messageOf(err)
	if err == nil {
		_, err = node.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{
			VolumeId: volumeID, PublishContext: publishContext, StagingTargetPath: staging, TargetPath: target, VolumeCapability: capability,
		})
		o.Publish, o.PublishMessage = code(err), messageOf(err)
	}
	var problems []error
	for path, options := range map[string]*string{staging: &o.StagingOptions, target: &o.TargetOptions} {
		found, err := mountOptions(path)
		problems = append(problems, err)
		*options = found
	}
	if o.TargetOptions != "" {
		o.Write = "ok"
		if err := os.WriteFile(filepath.Join(target, "written-by-cinder-csi-stage"), []byte("written\n"), 0o644); err != nil {
			o.Write = err.Error()
		}
		_, err := node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: volumeID, TargetPath: target})
		o.Unpublish = code(err)
		problems = append(problems, err)
	}
	if o.StagingOptions != "" {
		_, err := node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: volumeID, StagingTargetPath: staging})
		o.Unstage = code(err)
		problems = append(problems, err)
	}
	return o, errors.Join(problems...)
}

func messageOf(err error) string {
	if err == nil {
		return ""
	}
	return status.Convert(err).Message()
}

func main() {
	device := flag.String("device", "", "the volume's block device")
	accessMode := flag.String("access-mode", "", "the CSI access mode of the volume capability")
	publishedReadOnly := flag.Bool("published-read-only", false, "whether the controller published the volume read-only")
	directory := flag.String("directory", "", "where the staging and published mounts are made")
	flag.Parse()
	if *device == "" || *directory == "" {
		fmt.Fprintln(os.Stderr, "cinder-csi-stage: -device and -directory are required")
		os.Exit(2)
	}
	o, err := stage(*device, *accessMode, *publishedReadOnly, *directory)
	if o.Stage != "" {
		_ = json.NewEncoder(os.Stdout).Encode(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cinder-csi-stage:", err)
		os.Exit(1)
	}
}
