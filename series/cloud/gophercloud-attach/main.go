// Command gophercloud-attach attaches volumes to servers through
// gophercloud at compute microversion 2.105, as a Go client of the
// volume-multiattach-enhancements series does, and prints what the compute
// API then lists of each attachment.
//
// Usage:
//
//	gophercloud-attach SERVER:VOLUME[:MODE]...
//
// It authenticates from the OS_* variables (openstack.AuthOptionsFromEnv)
// and takes the region from OS_REGION_NAME. A MODE ("ro" or "rw") is sent
// as attach_mode; without one, no attach_mode is sent. Every argument is
// checked before the first request. The compute API must accept each
// attach with the 202 of 2.105; each attachment is then read back with a
// GET until the API lists it, and printed as one JSON line. Any other
// answer ends the command with an error, after the lines of the
// attachments made before it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"
)

const (
	microversion = "2.105"
	listedWithin = 5 * time.Minute
	pollInterval = 2 * time.Second
)

// attached is what the command prints of one attachment.
type attached struct {
	Server     string  `json:"server"`
	Volume     string  `json:"volume"`
	Requested  string  `json:"requested"`
	AttachMode *string `json:"attach_mode"`
}

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gophercloud-attach:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	requests, err := parse(args)
	if err != nil {
		return err
	}
	opts, err := openstack.AuthOptionsFromEnv()
	if err != nil {
		return err
	}
	provider, err := openstack.AuthenticatedClient(ctx, opts)
	if err != nil {
		return err
	}
	client, err := openstack.NewComputeV2(provider, gophercloud.EndpointOpts{
		Region: os.Getenv("OS_REGION_NAME"),
	})
	if err != nil {
		return err
	}
	client.Microversion = microversion
	for _, a := range requests {
		if err := attach(ctx, client, &a); err != nil {
			return err
		}
		line, err := json.Marshal(a)
		if err != nil {
			return err
		}
		fmt.Println(string(line))
	}
	return nil
}

// parse reads the SERVER:VOLUME[:MODE] arguments.
func parse(args []string) ([]attached, error) {
	if len(args) == 0 {
		return nil, errors.New("usage: gophercloud-attach SERVER:VOLUME[:MODE] ...")
	}
	requests := make([]attached, 0, len(args))
	for _, arg := range args {
		parts := strings.Split(arg, ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("%q is not SERVER:VOLUME[:MODE]", arg)
		}
		a := attached{Server: parts[0], Volume: parts[1]}
		if len(parts) == 3 {
			a.Requested = parts[2]
		}
		requests = append(requests, a)
	}
	return requests, nil
}

// attach requests the attachment, then reads it back once the compute API
// lists it.
func attach(ctx context.Context, client *gophercloud.ServiceClient, a *attached) error {
	opts := volumeattach.CreateOpts{
		VolumeID:   a.Volume,
		AttachMode: volumeattach.AttachMode(a.Requested),
	}
	_, err := volumeattach.Create(ctx, client, a.Server, opts).Extract()
	if !errors.Is(err, volumeattach.ErrAttachmentAccepted) {
		return fmt.Errorf("attach %s to %s: want the 202 of %s, got %w",
			a.Volume, a.Server, microversion, err)
	}
	ctx, cancel := context.WithTimeout(ctx, listedWithin)
	defer cancel()
	for {
		attachment, err := volumeattach.Get(ctx, client, a.Server, a.Volume).Extract()
		if err == nil {
			a.AttachMode = attachment.AttachMode
			return nil
		}
		if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return fmt.Errorf("get the attachment of %s to %s: %w", a.Volume, a.Server, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the attachment of %s to %s not listed: %w", a.Volume, a.Server, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}
