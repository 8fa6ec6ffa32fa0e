package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fakeController answers as a CSI controller service: the volume
// "conflict" is published in another mode, MULTI_NODE_READER_ONLY is
// confirmed for the volume "shared" only.
type fakeController struct {
	csi.UnimplementedControllerServer
	published   []*csi.ControllerPublishVolumeRequest
	unpublished []*csi.ControllerUnpublishVolumeRequest
}

func (f *fakeController) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{{
		Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{
			Type: csi.ControllerServiceCapability_RPC_PUBLISH_READONLY,
		}},
	}}}, nil
}

func (f *fakeController) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() != "shared" {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: "not supported"}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeCapabilities: req.GetVolumeCapabilities(),
	}}, nil
}

func (f *fakeController) ControllerPublishVolume(_ context.Context, req *csi.ControllerPublishVolumeRequest) (*csi.ControllerPublishVolumeResponse, error) {
	f.published = append(f.published, req)
	if req.GetVolumeId() == "conflict" {
		return nil, status.Error(codes.AlreadyExists, "published in another mode")
	}
	return &csi.ControllerPublishVolumeResponse{PublishContext: map[string]string{"DevicePath": "/dev/vdb"}}, nil
}

func (f *fakeController) ControllerUnpublishVolume(_ context.Context, req *csi.ControllerUnpublishVolumeRequest) (*csi.ControllerUnpublishVolumeResponse, error) {
	f.unpublished = append(f.unpublished, req)
	return &csi.ControllerUnpublishVolumeResponse{}, nil
}

func startFake(t *testing.T) (*fakeController, string) {
	socket := filepath.Join(t.TempDir(), "csi.sock")
	listener, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	fake := &fakeController{}
	csi.RegisterControllerServer(server, fake)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	return fake, "unix://" + socket
}

func lines(t *testing.T, output *bytes.Buffer) []result {
	var found []result
	for _, line := range strings.Split(strings.TrimSpace(output.String()), "\n") {
		var r result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		found = append(found, r)
	}
	return found
}

func TestEachCallAndItsAnswer(t *testing.T) {
	fake, endpoint := startFake(t)
	var output bytes.Buffer

	err := serve(endpoint, []string{
		"capabilities",
		"validate:shared:MULTI_NODE_READER_ONLY",
		"validate:single:MULTI_NODE_READER_ONLY",
		"publish:shared:node-a:MULTI_NODE_READER_ONLY",
		"publish:conflict:node-a:SINGLE_NODE_WRITER:readonly",
		"unpublish:shared:node-a",
	}, &output)

	if err != nil {
		t.Fatal(err)
	}
	got := lines(t, &output)
	if len(got) != 6 {
		t.Fatalf("%d lines for 6 calls: %s", len(got), output.String())
	}
	if got[0].Code != "OK" || len(got[0].Capabilities) != 1 || got[0].Capabilities[0] != "PUBLISH_READONLY" {
		t.Errorf("capabilities: %+v", got[0])
	}
	if got[1].Confirmed == nil || !*got[1].Confirmed || got[2].Confirmed == nil || *got[2].Confirmed {
		t.Errorf("validate: %+v, %+v", got[1], got[2])
	}
	if got[3].Code != "OK" || got[3].PublishContext["DevicePath"] != "/dev/vdb" {
		t.Errorf("publish: %+v", got[3])
	}
	if got[4].Code != "AlreadyExists" || got[4].Message != "published in another mode" || !got[4].Readonly {
		t.Errorf("conflicting publish: %+v", got[4])
	}
	if got[5].Code != "OK" || got[5].Volume != "shared" || got[5].Node != "node-a" {
		t.Errorf("unpublish: %+v", got[5])
	}
	if len(fake.published) != 2 {
		t.Fatalf("%d publishes", len(fake.published))
	}
	reader, writer := fake.published[0], fake.published[1]
	if reader.GetVolumeCapability().GetAccessMode().GetMode() != csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY || reader.GetReadonly() || reader.GetNodeId() != "node-a" {
		t.Errorf("reader-only publish sent as %v", reader)
	}
	if writer.GetVolumeCapability().GetAccessMode().GetMode() != csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER || !writer.GetReadonly() {
		t.Errorf("readonly writer publish sent as %v", writer)
	}
	if reader.GetVolumeCapability().GetMount() == nil {
		t.Errorf("publish without a mount capability: %v", reader)
	}
	if len(fake.unpublished) != 1 || fake.unpublished[0].GetVolumeId() != "shared" {
		t.Errorf("unpublished %v", fake.unpublished)
	}
}

func TestEveryArgumentCheckedBeforeAnyCall(t *testing.T) {
	for _, wrong := range []string{"attach:v:n", "publish:v:n", "publish:v:n:READ_SOMETIMES", "publish:v:n:SINGLE_NODE_WRITER:sometimes", "validate:v"} {
		fake, endpoint := startFake(t)
		var output bytes.Buffer

		err := serve(endpoint, []string{"publish:shared:node-a:MULTI_NODE_READER_ONLY", wrong}, &output)

		if err == nil {
			t.Errorf("%q accepted", wrong)
		}
		if len(fake.published) != 0 || output.Len() != 0 {
			t.Errorf("%q: a call was made before it was refused", wrong)
		}
	}
}

func TestAnUnreachablePluginFails(t *testing.T) {
	var output bytes.Buffer

	err := serve("unix://"+filepath.Join(t.TempDir(), "none.sock"), []string{"capabilities"}, &output)

	if err == nil || !strings.Contains(err.Error(), "unavailable") {
		t.Errorf("want the plugin unavailable, got %v", err)
	}
}
