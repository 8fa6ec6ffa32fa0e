module volume-multiattach.invalid/cinder-csi-stage

go 1.26.0

require (
	github.com/container-storage-interface/spec v1.12.0
	google.golang.org/grpc v1.80.0
	k8s.io/cloud-provider-openstack v1.36.0
)
