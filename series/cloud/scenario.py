"""`cloud scenario`: the feature on the real cloud, checked three ways
(the API, what libvirt and QEMU enforce, what the guest sees), then the
refusals, then tempest. Writes .work/cloud/report.json.
"""

import json
import subprocess
import time
import xml.etree.ElementTree as ElementTree

from series.cloud import api
from series.cloud import deploy
from series.cloud import layout
from series.cloud import tempest
from series import config
from series import guest
from series import process

PREFIX = 'mae-scenario'
MICROVERSION = '2.105'
BEFORE = '2.104'
BOOT_SECONDS = 300
GUEST_SECONDS = 180


def say(message):
    process.say(f'scenario: {message}')


class Failed(Exception):
    """A check of the scenario that did not hold."""


def check(condition, message):
    if not condition:
        raise Failed(message)


class Cloud:
    """The calls the scenario makes, as the mae member (and admin where
    only an admin may look: hosts, domains, Cinder's flags).
    """

    def __init__(self):
        self.member = api.Session(layout.MEMBER, layout.PROJECT)
        self.member.authenticate()
        self.admin = deploy.admin_session()

    def volume_path(self, suffix=''):
        return f'/{self.member.project_id}/volumes{suffix}'

    def volume(self, volume_id):
        return self.member.get('cinder-api', self.volume_path(
            f'/{volume_id}'))['volume']

    def create_volume(self, name, multiattach=True, image=None):
        body = {'name': f'{PREFIX}-{name}', 'size': 1,
                'volume_type': deploy.VOLUME_TYPE if multiattach
                else '__DEFAULT__'}
        if image:
            body['imageRef'] = image
        volume = self.member.call('POST', 'cinder-api', self.volume_path(),
                                  {'volume': body}, expect=202).body['volume']
        return self.wait_volume(volume['id'], ('available',))

    def wait_volume(self, volume_id, statuses, timeout=BOOT_SECONDS):
        def probe():
            volume = self.volume(volume_id)
            if volume['status'] == 'error':
                raise Failed(f'volume {volume_id} went to error')
            return volume if volume['status'] in statuses else None
        return api.wait(f'volume {volume_id} {"/".join(statuses)}', probe,
                        timeout)

    def image(self):
        images = self.member.get('glance-api',
                                 f'/images?name={deploy.IMAGE}')['images']
        return next(image['id'] for image in images
                    if image['status'] == 'active')

    def flavor(self, name):
        flavors = self.member.get('nova-api', '/flavors')['flavors']
        return next(flavor['id'] for flavor in flavors
                    if flavor['name'] == name)

    def create_servers(self, name, bdm, count=1, microversion=MICROVERSION,
                       expect=202):
        """POST /servers; the reply (ids looked up by reservation)."""
        body = {'server': {
            'name': f'{PREFIX}-{name}', 'flavorRef': self.flavor('mae.tiny'),
            'networks': 'none', 'min_count': count, 'max_count': count,
            'return_reservation_id': True,
            'block_device_mapping_v2': bdm}}
        return self.member.call('POST', 'nova-api', '/servers', body,
                                microversion=microversion, expect=expect)

    def servers(self, query=''):
        return self.admin.get('nova-api', f'/servers/detail?all_tenants=1'
                              f'&{query}', microversion=MICROVERSION)[
                                  'servers']

    def server(self, server_id):
        return self.admin.get('nova-api', f'/servers/{server_id}',
                              microversion=MICROVERSION)['server']

    def wait_server(self, server_id, statuses=('ACTIVE',),
                    timeout=BOOT_SECONDS):
        def probe():
            server = self.server(server_id)
            if server['status'] == 'ERROR':
                raise Failed(f'server {server_id} went to ERROR: '
                             f'{server.get("fault", {}).get("message")}')
            return server if (server['status'] in statuses and
                              not server['OS-EXT-STS:task_state']) else None
        return api.wait(f'server {server_id} {"/".join(statuses)}', probe,
                        timeout)

    def attachments(self, server_id, microversion=MICROVERSION):
        return self.member.get(
            'nova-api', f'/servers/{server_id}/os-volume_attachments',
            microversion=microversion)['volumeAttachments']

    def attach(self, server_id, volume_id, mode=None,
               microversion=MICROVERSION, expect=202):
        body = {'volumeId': volume_id}
        if mode:
            body['attach_mode'] = mode
        reply = self.member.call(
            'POST', 'nova-api', f'/servers/{server_id}/os-volume_attachments',
            {'volumeAttachment': body}, microversion=microversion,
            expect=expect)
        if reply.status < 300:
            # Asynchronous since 2.101: done once Cinder has it attached.
            api.wait(f'volume {volume_id} attached to {server_id}',
                     lambda: any(
                         attachment['server_id'] == server_id
                         for attachment in self.volume(volume_id)[
                             'attachments']) and self.attached(
                                 server_id, volume_id), BOOT_SECONDS)
        return reply

    def attached(self, server_id, volume_id):
        return next((attachment for attachment in self.attachments(server_id)
                     if attachment['volumeId'] == volume_id), None)

    def console(self, server_id):
        return self.member.call(
            'POST', 'nova-api', f'/servers/{server_id}/action',
            {'os-getConsoleOutput': {}}, expect=200).body['output']

    def action(self, server_id, body, microversion=MICROVERSION,
               expect=202):
        return self.member.call('POST', 'nova-api',
                                f'/servers/{server_id}/action', body,
                                microversion=microversion, expect=expect)

    def delete_leftovers(self):
        """Servers and volumes of an earlier run, so a run starts clean."""
        for server in self.servers(f'name={PREFIX}'):
            self.admin.call('DELETE', 'nova-api', f'/servers/{server["id"]}',
                            expect=(204, 404))
        api.wait('earlier servers deleted',
                 lambda: not self.servers(f'name={PREFIX}'), BOOT_SECONDS)
        volumes = self.member.get('cinder-api', self.volume_path(
            f'/detail?name~={PREFIX}'))['volumes']
        for volume in volumes:
            if volume['name'].startswith(PREFIX):
                self.member.call('DELETE', 'cinder-api', self.volume_path(
                    f'/{volume["id"]}'), expect=(202, 404))


def virsh(*args):
    return subprocess.run(['virsh', '-c', 'qemu:///system', *args],
                          check=True, text=True,
                          stdout=subprocess.PIPE).stdout


def domain_disks(domain):
    """{volume id: (target dev, readonly, ro per QEMU)} of a domain."""
    return disks(virsh('dumpxml', domain), virsh(
        'qemu-monitor-command', domain, '{"execute": "query-block"}'))


def disks(domain_xml, query_block):
    """The libvirt XML gives each disk's serial (Nova's volume id), alias
    and <readonly/>; QMP query-block gives what QEMU enforces, matched by
    the alias in the device's qdev path (or its device name).
    """
    qemu_ro = {}
    for block in json.loads(query_block)['return']:
        if 'inserted' not in block:
            continue
        names = {block.get('device')} | set(block.get('qdev', '').split('/'))
        for name in names - {'', None}:
            qemu_ro[name] = block['inserted']['ro']
    found = {}
    for disk in ElementTree.fromstring(domain_xml).iter('disk'):
        serial = disk.findtext('serial')
        alias = disk.find('alias')
        if not serial or alias is None:
            continue
        found[serial] = (disk.find('target').get('dev'),
                         disk.find('readonly') is not None,
                         qemu_ro.get(alias.get('name')))
    return found


class Scenario:

    def __init__(self):
        self.cloud = Cloud()
        self.report = {'servers': {}, 'attachments': [], 'steps': [],
                       'tempest': None}
        self.servers = []
        self.volumes = {}
        # (server, volume) -> True when the disk must be read-only.
        self.expected = {}

    def step(self, number, title, function):
        say(f'step {number}: {title}')
        started = time.monotonic()
        try:
            detail = function() or ''
            passed = True
        except (Failed, config.SeriesError, subprocess.CalledProcessError,
                StopIteration) as error:
            detail = f'{type(error).__name__}: {error}'
            passed = False
        seconds = round(time.monotonic() - started, 1)
        self.report['steps'].append({'step': number, 'title': title,
                                     'passed': passed, 'detail': detail,
                                     'seconds': seconds})
        say(f'step {number}: {"passed" if passed else "FAILED"} '
            f'({seconds}s) {detail}')
        return passed

    # 1
    def multi_create(self):
        image = self.cloud.image()
        root = self.cloud.create_volume('root', image=image)
        self.volumes['root'] = root['id']
        bdm = [{'boot_index': 0, 'uuid': root['id'], 'source_type': 'volume',
                'destination_type': 'volume', 'attach_mode': 'ro'}]
        reply = self.cloud.create_servers('multi', bdm, count=3)
        reservation = reply.body['reservation_id']
        servers = self.cloud.servers(f'reservation_id={reservation}')
        check(len(servers) == 3, f'{len(servers)} servers of 3 created')
        self.servers = sorted(server['id'] for server in servers)
        for server_id in self.servers:
            self.cloud.wait_server(server_id)
            self.expected[server_id, root['id']] = True
        attachments = self.cloud.volume(root['id'])['attachments']
        check(sorted(a['server_id'] for a in attachments) == self.servers,
              f'Cinder lists {len(attachments)} attachments of the root, '
              'not one per server')
        return (f'3 servers ACTIVE from one ro root {root["id"]}, one '
                'Cinder attachment each')

    # 2
    def attach_modes(self):
        data = self.cloud.create_volume('data')
        self.volumes['data'] = data['id']
        # As `openstack server add volume SERVER VOLUME` finds it by name.
        named = self.cloud.member.get('cinder-api', self.cloud.volume_path(
            f'/detail?name={data["name"]}'))['volumes']
        check([volume['id'] for volume in named] == [data['id']],
              f'the member looking {data["name"]} up by name finds '
              f'{[volume["id"] for volume in named]}')
        for server_id, mode in zip(self.servers, ('rw', 'ro', 'ro')):
            self.cloud.attach(server_id, data['id'], mode)
            self.expected[server_id, data['id']] = mode == 'ro'
        modes = [self.cloud.attached(server_id, data['id'])['attach_mode']
                 for server_id in self.servers]
        check(modes == ['rw', 'ro', 'ro'], f'GET at 2.105 shows {modes}')
        return ('data volume found by name, attached rw, ro, ro; GET shows '
                'rw, ro, ro')

    # 3 and 4
    def views(self, server_ids=None):
        """Record every attachment of the servers: API, XML, QEMU and
        the guest; fail unless all agree with what was asked.
        """
        problems = []
        for server_id in server_ids or self.servers:
            problems += self.record_server(server_id)
        check(not problems, '; '.join(problems))
        return (f'{len(self.report["attachments"])} attachments recorded, '
                'API, libvirt XML, QEMU and guest agree')

    def record_server(self, server_id):
        server = self.cloud.server(server_id)
        domain = server['OS-EXT-SRV-ATTR:instance_name']
        uuid = virsh('domuuid', domain).strip()
        self.report['servers'][server_id] = {
            'host': server['OS-EXT-SRV-ATTR:host'], 'domain': domain,
            'domain_uuid': uuid}
        disks = domain_disks(domain)
        attachments = self.cloud.attachments(server_id)
        wanted = {attachment['volumeId'][:guest.SERIAL_CHARS]
                  for attachment in attachments}

        def guest_verdicts():
            found = {serial: (ro, write) for serial, ro, write in
                     guest.verdicts(self.cloud.console(server_id)).values()}
            return found if wanted <= set(found) else None
        in_guest = api.wait(f'the guest of {server_id} reporting its disks',
                            guest_verdicts, GUEST_SECONDS, interval=3)
        self.report['attachments'] = [
            row for row in self.report['attachments']
            if row['server_id'] != server_id]
        problems = []
        for attachment in attachments:
            volume_id = attachment['volumeId']
            device, xml_ro, qemu_ro = disks.get(volume_id, (None,) * 3)
            guest_ro, guest_write = in_guest[volume_id[:guest.SERIAL_CHARS]]
            row = {'server_id': server_id, 'volume_id': volume_id,
                   'device': attachment['device'],
                   'api_mode': attachment['attach_mode'],
                   'xml_readonly': xml_ro, 'qemu_ro': qemu_ro,
                   'guest_ro': guest_ro, 'guest_write': guest_write}
            self.report['attachments'].append(row)
            expected = self.expected.get((server_id, volume_id))
            if expected is None:
                continue
            seen = (xml_ro, qemu_ro, guest_ro, guest_write == 'FAILED')
            if seen != (expected,) * 4:
                problems.append(
                    f'{volume_id} on {server_id}: expected '
                    f'{"ro" if expected else "rw"}, xml_readonly={xml_ro} '
                    f'qemu_ro={qemu_ro} guest_ro={guest_ro} '
                    f'write={guest_write}')
        return problems

    # 5
    def readonly_flag(self):
        server_id = self.servers[0]
        cases = (('flag-false', False, None, False),
                 ('flag-true', True, 'rw', True))
        for name, flag, mode, expect_ro in cases:
            volume = self.cloud.create_volume(name)
            self.volumes[name] = volume['id']
            self.cloud.admin.call(
                'POST', 'cinder-api', f'/volumes/{volume["id"]}/action',
                {'os-update_readonly_flag': {'readonly': flag}}, expect=202)
            self.cloud.attach(server_id, volume['id'], mode)
            self.expected[server_id, volume['id']] = expect_ro
        self.views([server_id])
        return ('readonly flag False, no mode: writable in the guest; flag '
                'True, attached rw: read-only in the guest')

    # 6
    def reboot_and_resize(self):
        server_id = self.servers[1]
        self.cloud.action(server_id, {'reboot': {'type': 'HARD'}})
        self.cloud.wait_server(server_id)
        self.views([server_id])
        self.cloud.action(server_id, {'resize': {
            'flavorRef': self.cloud.flavor('mae.small')}})
        self.cloud.wait_server(server_id, ('VERIFY_RESIZE',))
        self.cloud.action(server_id, {'confirmResize': None},
                          expect=204)
        server = self.cloud.wait_server(server_id)
        check(server['flavor']['original_name'] == 'mae.small',
              f'flavor after resize: {server["flavor"]}')
        self.views([server_id])
        return ('hard reboot, then resize to the same host: ro disks still '
                'read-only in XML, QEMU and guest')

    # 7
    def refusals(self):
        server_id = self.servers[0]
        spare = self.cloud.create_volume('spare')
        single = self.cloud.create_volume('single', multiattach=False)
        self.volumes.update(spare=spare['id'], single=single['id'])
        before = self.snapshot()
        results = []

        def refused(name, reply, statuses=(400,)):
            check(reply.status in statuses,
                  f'{name}: {reply.status} {reply.text[:200]}')
            check(self.snapshot() == before,
                  f'{name}: something was left behind')
            results.append(f'{name} {reply.status}')

        refused('attach_mode at 2.104', self.cloud.attach(
            server_id, spare['id'], 'ro', microversion=BEFORE, expect=None))
        refused('attach_mode "rx"', self.cloud.attach(
            server_id, spare['id'], 'rx', expect=None))
        refused('local BDM with a mode', self.cloud.create_servers(
            'local', [{'boot_index': 0, 'uuid': self.cloud.image(),
                       'source_type': 'image', 'destination_type': 'local',
                       'attach_mode': 'ro'}], expect=None))
        refused('multi-create from a non-multiattach volume',
                self.cloud.create_servers('single', [{
                    'boot_index': 0, 'uuid': single['id'],
                    'source_type': 'volume', 'destination_type': 'volume',
                    'attach_mode': 'ro'}], count=2, expect=None))
        refused('rebuild reimaging the ro root', self.cloud.action(
            server_id, {'rebuild': {'imageRef': self.cloud.image()}},
            expect=None), statuses=(400, 409))
        return ', '.join(results)

    def snapshot(self):
        """What a refused request must not change: the servers, every
        volume's status and attachments.
        """
        servers = sorted((server['id'], server['status'])
                         for server in self.cloud.servers(f'name={PREFIX}'))
        volumes = {}
        for name, volume_id in self.volumes.items():
            volume = self.cloud.volume(volume_id)
            volumes[name] = (volume['status'], sorted(
                a['attachment_id'] for a in volume['attachments']))
        return servers, volumes

    def run(self):
        self.cloud.delete_leftovers()
        self.step(1, 'multi-create of 3 servers from one ro multiattach '
                  'root volume', self.multi_create)
        self.step(2, 'a multiattach volume attached rw, ro, ro',
                  self.attach_modes)
        self.step('3-4', 'API, libvirt XML, QEMU and the guest agree',
                  self.views)
        self.step(5, "Cinder's readonly flag", self.readonly_flag)
        self.step(6, 'hard reboot and resize to the same host',
                  self.reboot_and_resize)
        self.step(7, 'refusals leave nothing behind', self.refusals)
        self.step(8, 'upstream tempest: compute volume attach and '
                  'multiattach tests', self.tempest)
        return self.report

    # 8
    def tempest(self):
        results = tempest.run(self.cloud.admin)
        self.report['tempest'] = results
        check(results['passed'] and not results['failed'],
              f'tempest: {results["failed"]} failed: '
              f'{", ".join(results["failures"])}')
        return (f'tempest: {results["passed"]} passed, {results["failed"]} '
                f'failed, {results["skipped"]} skipped')


def print_report(report):
    process.say(f'{"server":36} {"volume":36} {"device":8} {"api":3} '
                f'{"xml_ro":6} {"qemu_ro":7} {"guest_ro":8} guest_write')
    for row in report['attachments']:
        process.say(f'{row["server_id"]:36} {row["volume_id"]:36} '
                    f'{row["device"] or "-":8} {row["api_mode"] or "-":3} '
                    f'{str(row["xml_readonly"]):6} {str(row["qemu_ro"]):7} '
                    f'{str(row["guest_ro"]):8} {row["guest_write"]}')
    for step in report['steps']:
        process.say(f'step {step["step"]:4} '
                    f'{"passed" if step["passed"] else "FAILED":6} '
                    f'{step["seconds"]:6}s  {step["title"]}')
    tempest = report['tempest']
    if tempest:
        process.say(f'tempest: {tempest["passed"]} passed, '
                    f'{tempest["failed"]} failed, {tempest["skipped"]} '
                    f'skipped in {tempest["seconds"]}s')
        for test in tempest['failures']:
            process.say(f'  FAILED  {test}')
        for test, reason in sorted(tempest['skips'].items()):
            process.say(f'  SKIPPED {test}: {reason}')


def run():
    """`cloud up` if needed, the scenario, report.json; the report."""
    deploy.up()
    started = time.monotonic()
    report = Scenario().run()
    report['seconds'] = round(time.monotonic() - started, 1)
    path = layout.directory() / 'report.json'
    deploy.write_json(path, report)
    print_report(report)
    failed = [step for step in report['steps'] if not step['passed']]
    say(f'{len(report["steps"]) - len(failed)} of {len(report["steps"])} '
        f'steps passed in {report["seconds"]}s; report in '
        f'{path.relative_to(config.ROOT)}')
    return report


def main():
    report = run()
    return 1 if any(not step['passed'] for step in report['steps']) else 0
