"""Tests of series.cloud.network: the cloud's links, made in a network
namespace of the test's (it needs root and ip netns, as the cloud does).
"""

import json
import os
import shutil
import subprocess
import unittest

from series.cloud import hosts
from series.cloud import network


def can_make_namespaces():
    return os.geteuid() == 0 and shutil.which('ip') and subprocess.run(
        ['ip', 'netns', 'list'], capture_output=True).returncode == 0


@unittest.skipUnless(can_make_namespaces(), 'needs root and ip netns')
class NetworkTest(unittest.TestCase):
    """The cloud's links, made in a network namespace of the test's."""

    MAC = '52:54:00:00:00:01'

    def setUp(self):
        self.namespace = f'mae-test-{os.getpid()}'
        subprocess.run(['ip', 'netns', 'add', self.namespace], check=True)
        self.addCleanup(subprocess.run,
                        ['ip', 'netns', 'delete', self.namespace])
        for command in network.link_commands():
            self.ip(*command)

    def ip(self, *command, check=True):
        return subprocess.run(['ip', '-n', self.namespace, *command],
                              capture_output=True, text=True, check=check)

    def macvtap(self, name, lower):
        """A macvtap device with MAC on `lower`, brought up as libvirt
        does for a guest: the failure, if it fails.
        """
        self.ip('link', 'add', 'link', lower, 'name', name, 'address',
                self.MAC, 'type', 'macvtap', 'mode', 'bridge')
        return self.ip('link', 'set', name, 'up', check=False).stderr

    def test_each_hosts_lower_device_on_the_gateways_bridge(self):
        links = {link['ifname']: link for link in json.loads(
            self.ip('-j', '-d', 'link', 'show').stdout)}
        self.assertEqual(
            sorted(network.bridge_port(host) for host in hosts.HOSTS),
            sorted(name for name, link in links.items()
                   if link.get('master') == network.BRIDGE))
        for host in hosts.HOSTS:
            self.assertEqual(network.bridge_port(host),
                             links[network.lower_device(host)]['link'])
        address = json.loads(self.ip('-j', 'addr', 'show', network.BRIDGE)
                             .stdout)[0]['addr_info'][0]
        self.assertEqual((str(network.GATEWAY), network.SUBNET.prefixlen),
                         (address['local'], address['prefixlen']))

    def test_one_mac_address_on_both_hosts_as_in_a_live_migration(self):
        first, second = hosts.HOSTS
        self.assertEqual('', self.macvtap(
            'macvtap0', network.lower_device(first)))
        self.assertEqual('', self.macvtap(
            'macvtap1', network.lower_device(second)))
        # The kernel refuses it on one lower device: why each host has
        # its own.
        self.assertIn('Address already in use', self.macvtap(
            'macvtap2', network.lower_device(first)))
