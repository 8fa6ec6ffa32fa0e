"""What the scenario observes: servers, Cinder's attachments, guest disks."""

import time

from lxml import etree

from nova.tests.fixtures import libvirt as libvirt_fixtures

from demo_constants import WAIT_SECONDS


def write_guest_disks(computes, guests_dir):
    """Write each guest's current <disk> elements to guests/<id>.xml."""
    guests_dir.mkdir(parents=True, exist_ok=True)
    current = set()
    for host, compute in computes.items():
        connection = compute.driver._host.get_connection()
        for domain in connection.listAllDomains(
                libvirt_fixtures.VIR_CONNECT_LIST_DOMAINS_ACTIVE |
                libvirt_fixtures.VIR_CONNECT_LIST_DOMAINS_INACTIVE):
            disks = etree.Element('disks')
            disks.extend(etree.fromstring(domain.XMLDesc(0)).findall(
                './devices/disk'))
            etree.indent(disks)
            text = (f'<!-- {domain.name()} on {host} -->\n' +
                    etree.tostring(disks, encoding='unicode') + '\n')
            path = guests_dir / f'{domain.UUIDString()}.xml'
            current.add(path)
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
    for path in guests_dir.glob('*.xml'):
        if path not in current:
            path.unlink()


class Observer:
    """Reads the deployment's state through the API, Cinder and libvirt."""

    def __init__(self, http, cinder, computes, report):
        self.http = http
        self.cinder = cinder
        self.computes = computes
        self.report = report
        self.transcript = report.transcript

    def wait_for(self, what, predicate):
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            result = predicate()
            if result:
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f'timed out waiting for {what}')
            time.sleep(0.2)

    def server(self, server_id):
        code, body = self.http('GET', f'/servers/{server_id}',
                               token='ADMIN_TOKEN', show=False)
        assert code == 200, (code, body)
        return body['server']

    def wait_for_server(self, server_id, status):
        def settled():
            server = self.server(server_id)
            if server['status'] == 'ERROR':
                raise AssertionError(
                    f'server {server_id} went to ERROR: {server.get("fault")}')
            if (server['status'] == status and
                    server['OS-EXT-STS:task_state'] is None):
                return server
        server = self.wait_for(f'server {server_id} {status}', settled)
        self.transcript.text(
            f'(polled GET /v2.1/servers/{server_id}: {server["name"]} '
            f'{server["status"]} on {server["OS-EXT-SRV-ATTR:host"]})')
        return server

    def wait_for_attached(self, server_id, volume_id):
        def attached():
            return [a for _, a in self.cinder.attachments(volume_id)
                    if a['instance_uuid'] == server_id and
                    a['attach_status'] == 'attached']
        self.wait_for(f'volume {volume_id} attached to {server_id}',
                      attached)

    def guest_disk(self, server, device):
        server_id, host = server['id'], server['OS-EXT-SRV-ATTR:host']
        connection = self.computes[host].driver._host.get_connection()
        xml = connection.lookupByUUIDString(server_id).XMLDesc(0)
        target = device.rsplit('/', 1)[-1]
        for disk in etree.fromstring(xml).findall('./devices/disk'):
            if disk.find('./target').get('dev') == target:
                return host, disk
        raise AssertionError(f'no disk {target} in the guest of {server_id}')

    def volume_attachments(self, server_id, show=True):
        code, body = self.http(
            'GET', f'/servers/{server_id}/os-volume_attachments', show=show)
        assert code == 200, (code, body)
        return body['volumeAttachments']

    def snapshot(self):
        """What a refused request must leave unchanged."""
        code, body = self.http('GET', '/servers', show=False)
        assert code == 200, (code, body)
        return (sorted(s['id'] for s in body['servers']),
                sorted(a['id'] for _, a in self.cinder.attachments()))

    def expect_unchanged(self, step, before):
        after = self.snapshot()
        self.report.expect(step, 'no server or Cinder attachment added',
                           'none added' if after == before else
                           f'servers {before[0]} -> {after[0]}, attachments '
                           f'{before[1]} -> {after[1]}', after == before)

    def check_guest(self, step, server_id, show=True):
        """Each volume's guest disk: read-only exactly when attached ro."""
        results = []
        server = self.server(server_id)
        for attachment in self.volume_attachments(server_id, show=False):
            host, disk = self.guest_disk(server, attachment['device'])
            readonly = disk.find('./readonly') is not None
            shareable = disk.find('./shareable') is not None
            if show:
                xml = etree.tostring(disk, pretty_print=True).decode()
                self.transcript.block(
                    [f'<!-- {server["name"]} on {host}, '
                     f'{attachment["device"]}, attach_mode '
                     f'{attachment["attach_mode"]} -->'] +
                    xml.rstrip().splitlines(), 'xml')
            results.append((attachment['attach_mode'], readonly, shareable))
        ok = all(readonly == (mode == 'ro') and shareable
                 for mode, readonly, shareable in results)
        observed = ', '.join(
            f'{mode}: ' + ('<readonly/>' if readonly else 'writable') +
            (' <shareable/>' if shareable else '')
            for mode, readonly, shareable in results)
        self.report.expect(step, 'ro disks <readonly/>, rw writable, all '
                           '<shareable/>', observed, ok)
        return host
