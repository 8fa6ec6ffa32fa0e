"""The servers' network: a Neutron provider network (flat, on PHYSNET)
on a Linux bridge of the machine, which the guests reach through macvtap
devices (Neutron's macvtap mechanism driver and agent; libvirt makes the
devices).

Each compute host's macvtap devices sit on a lower device of the host's
own, one end of a veth pair whose other end is a port of the bridge: the
two hosts share the machine's network namespace, and a server being
live-migrated has a macvtap device on each host at once, with the same
MAC address, which the kernel refuses on one lower device. The bridge
holds the gateway's address, from which tempest reaches the guests over
SSH (connect_method fixed). No DHCP: a guest reads its address from
Nova's config drive (series.cloud.guest).
"""

import ipaddress
import subprocess

from series.cloud import hosts

BRIDGE = 'mae-br'
PHYSNET = 'physnet1'
# devstack's name, which python-openstackclient's functional tests look
# for (series.cloud.osc_functional).
NETWORK = 'private'
SUBNET = ipaddress.ip_network('10.199.0.0/24')
GATEWAY = SUBNET[1]


def lower_device(host):
    """The device the macvtap devices of `host`'s guests sit on."""
    return f'mae-phys-{host.key}'


def bridge_port(host):
    return f'mae-br-{host.key}'


def link_commands():
    """The `ip` commands that make the bridge and each host's veth pair."""
    commands = [
        ['link', 'add', BRIDGE, 'type', 'bridge'],
        ['addr', 'add', f'{GATEWAY}/{SUBNET.prefixlen}', 'dev', BRIDGE],
        ['link', 'set', BRIDGE, 'up']]
    for host in hosts.HOSTS:
        commands += [
            ['link', 'add', lower_device(host), 'type', 'veth', 'peer',
             'name', bridge_port(host)],
            ['link', 'set', bridge_port(host), 'master', BRIDGE],
            ['link', 'set', bridge_port(host), 'up'],
            ['link', 'set', lower_device(host), 'up']]
    return commands


def devices():
    return [BRIDGE, *(lower_device(host) for host in hosts.HOSTS)]


def exists(device):
    return subprocess.run(['ip', 'link', 'show', device],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def up():
    """Make the bridge and the hosts' devices unless they all exist;
    whether it made them.
    """
    if all(exists(device) for device in devices()):
        return False
    down()
    for command in link_commands():
        subprocess.run(['ip', *command], check=True)
    return True


def down():
    """Remove the devices (a veth pair goes with either end, the macvtap
    devices with their lower device); the names of those there were.
    """
    removed = [device for device in devices() if exists(device)]
    for device in removed:
        subprocess.run(['ip', 'link', 'delete', device], check=True)
    return removed


def content(admin):
    """The shared provider network and its subnet, unless they exist;
    the network's id.
    """
    found = admin.get('neutron-api', f'/networks?name={NETWORK}')['networks']
    if found:
        network = found[0]
    else:
        network = admin.call('POST', 'neutron-api', '/networks', {
            'network': {'name': NETWORK, 'shared': True,
                        'provider:network_type': 'flat',
                        'provider:physical_network': PHYSNET}},
            expect=201).body['network']
    if not network['subnets']:
        admin.call('POST', 'neutron-api', '/subnets', {'subnet': {
            'network_id': network['id'], 'name': NETWORK, 'ip_version': 4,
            'cidr': str(SUBNET), 'gateway_ip': str(GATEWAY),
            'enable_dhcp': False,
            'allocation_pools': [{'start': str(SUBNET[10]),
                                  'end': str(SUBNET[-2])}]}}, expect=201)
    return network['id']
