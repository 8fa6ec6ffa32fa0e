"""The real cloud: the patched Nova and Cinder running as separate
services on 127.0.0.1 with Keystone, Placement, Glance, Neutron, libvirt
with QEMU, Ceph, MariaDB and RabbitMQ (`tools/series cloud`).
"""
