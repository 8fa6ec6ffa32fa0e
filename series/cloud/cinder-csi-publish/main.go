// Command cinder-csi-publish calls the controller service of a CSI plugin
// over its gRPC socket, as Kubernetes' external-attacher does, and prints
// each call's result as a line of JSON.
//
// Usage:
//
//	cinder-csi-publish -endpoint unix:///path/csi.sock CALL...
//
// Each CALL is one of:
//
//	capabilities
//	validate:VOLUME:ACCESS_MODE
//	publish:VOLUME:NODE:ACCESS_MODE[:readonly]
//	unpublish:VOLUME:NODE
//
// ACCESS_MODE is the name of a CSI access mode (SINGLE_NODE_WRITER,
// MULTI_NODE_READER_ONLY). A call the plugin answers with an error is a
// result: its gRPC code and message are printed. The command exits
// non-zero when an argument is wrong, before any call, or when the
// plugin cannot be reached.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// callTimeout bounds one call: a publish waits for the compute API to
// attach the volume.
const callTimeout = 5 * time.Minute

type call struct {
	Verb       string `json:"call"`
	Volume     string `json:"volume,omitempty"`
	Node       string `json:"node,omitempty"`
	AccessMode string `json:"access_mode,omitempty"`
	Readonly   bool   `json:"readonly,omitempty"`
}

type result struct {
	call
	Code           string            `json:"code"`
	Message        string            `json:"message,omitempty"`
	PublishContext map[string]string `json:"publish_context,omitempty"`
	Capabilities   []string          `json:"capabilities,omitempty"`
	Confirmed      *bool             `json:"confirmed,omitempty"`
}

func parse(argument string) (call, error) {
	parts := strings.Split(argument, ":")
	c := call{Verb: parts[0]}
	want := map[string]int{"capabilities": 1, "validate": 3, "publish": 4, "unpublish": 3}[c.Verb]
	switch {
	case want == 0:
		return c, fmt.Errorf("%q: unknown call %q", argument, c.Verb)
	case c.Verb == "publish" && len(parts) == 5 && parts[4] == "readonly":
		c.Readonly = true
	case len(parts) != want:
		return c, fmt.Errorf("%q: %s takes %d fields", argument, c.Verb, want)
	}
	switch c.Verb {
	case "validate":
		c.Volume, c.AccessMode = parts[1], parts[2]
	case "publish":
		c.Volume, c.Node, c.AccessMode = parts[1], parts[2], parts[3]
	case "unpublish":
		c.Volume, c.Node = parts[1], parts[2]
	}
	if c.AccessMode != "" {
		if _, ok := csi.VolumeCapability_AccessMode_Mode_value[c.AccessMode]; !ok {
			return c, fmt.Errorf("%q: unknown access mode %q", argument, c.AccessMode)
		}
	}
	return c, nil
}

func capability(accessMode string) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: "ext4"}},
		AccessMode: &csi.VolumeCapability_AccessMode{
			Mode: csi.VolumeCapability_AccessMode_Mode(csi.VolumeCapability_AccessMode_Mode_value[accessMode]),
		},
	}
}

func run(ctx context.Context, client csi.ControllerClient, c call) result {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	r := result{call: c}
	var err error
	switch c.Verb {
	case "capabilities":
		var reply *csi.ControllerGetCapabilitiesResponse
		reply, err = client.ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
		for _, capability := range reply.GetCapabilities() {
			r.Capabilities = append(r.Capabilities, capability.GetRpc().GetType().String())
		}
	case "validate":
		var reply *csi.ValidateVolumeCapabilitiesResponse
		reply, err = client.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{
			VolumeId:           c.Volume,
			VolumeCapabilities: []*csi.VolumeCapability{capability(c.AccessMode)},
		})
		if err == nil {
			confirmed := reply.GetConfirmed() != nil
			r.Confirmed = &confirmed
			r.Message = reply.GetMessage()
		}
	case "publish":
		var reply *csi.ControllerPublishVolumeResponse
		reply, err = client.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{
			VolumeId:         c.Volume,
			NodeId:           c.Node,
			VolumeCapability: capability(c.AccessMode),
			Readonly:         c.Readonly,
		})
		r.PublishContext = reply.GetPublishContext()
	case "unpublish":
		_, err = client.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{
			VolumeId: c.Volume,
			NodeId:   c.Node,
		})
	}
	answer := status.Convert(err)
	r.Code = answer.Code().String()
	if err != nil {
		r.Message = answer.Message()
	}
	return r
}

func main() {
	endpoint := flag.String("endpoint", "", "the plugin's CSI endpoint (unix:///path)")
	flag.Parse()
	if err := serve(*endpoint, flag.Args(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cinder-csi-publish:", err)
		os.Exit(1)
	}
}

func serve(endpoint string, arguments []string, stdout io.Writer) error {
	if !strings.HasPrefix(endpoint, "unix://") {
		return errors.New("-endpoint unix:///path is required")
	}
	if len(arguments) == 0 {
		return errors.New("no call given")
	}
	calls := make([]call, 0, len(arguments))
	for _, argument := range arguments {
		c, err := parse(argument)
		if err != nil {
			return err
		}
		calls = append(calls, c)
	}
	connection, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer connection.Close()
	client := csi.NewControllerClient(connection)
	output := json.NewEncoder(stdout)
	for _, c := range calls {
		r := run(context.Background(), client, c)
		if r.Code == "Unavailable" {
			return fmt.Errorf("%s: the plugin is unavailable: %s", c.Verb, r.Message)
		}
		if err := output.Encode(r); err != nil {
			return err
		}
	}
	return nil
}
