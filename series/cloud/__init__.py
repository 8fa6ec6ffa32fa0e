"""The real cloud: the patched Nova and Cinder running as separate
services with Keystone, Placement, Glance, Neutron, Ceph, MariaDB and
RabbitMQ, the control plane on 127.0.0.1 and two compute hosts, each
with its own libvirt and QEMU (`tools/series cloud`).
"""
