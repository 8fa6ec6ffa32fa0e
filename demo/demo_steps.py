"""The scenario's steps, driven over HTTP against the deployment."""

from nova.compute import api as compute_api
from nova.objects import service as service_obj

from demo_constants import COMPUTES
from demo_constants import IMAGE
from demo_constants import MICROVERSION
from demo_observe import Observer


class Scenario:
    """The feature's steps, each checked and written to the transcript."""

    def __init__(self, deployment, api):
        self.deployment = deployment
        self.api = api
        self.http = api.http
        self.cinder = deployment.cinder
        self.report = deployment.report
        self.transcript = deployment.report.transcript
        self.observe = Observer(api.http, deployment.cinder,
                                deployment.computes, deployment.report)
        self.volume_ids = {}
        self.server_ids = []
        self.flavors = {}

    def run(self):
        """Run the steps in order; the first that fails ends the run."""
        steps = (self.prepare, self.multi_create, self.attach_modes,
                 self.guest_disks, self.moves, self.refusals)
        for step in steps:
            try:
                step()
            except Exception as error:
                self.report.expect(step.__name__, 'to complete',
                                   f'{type(error).__name__}: {error}', False)
                return

    def prepare(self):
        self.transcript.heading('0. The deployment')
        code, body = self.http('GET', '/', token=None, microversion=None,
                               root=True, show=False)
        self.report.expect_status('0 GET / without a token (versions)', 200,
                                  code, body)
        code, body = self.http('GET', '', token=None, microversion=None,
                               show=False)
        self.report.expect_status('0 GET /v2.1 without a token', 200, code,
                                  body)
        version = body['version']
        self.transcript.text(
            f'Nova compute API {self.api.endpoint}: microversions '
            f'{version["min_version"]} to {version["version"]}; computes '
            f'{", ".join(COMPUTES)} (libvirt driver, fakelibvirt).')
        self.report.expect('0 API version',
                           f'max microversion {MICROVERSION}',
                           version['version'],
                           version['version'] == MICROVERSION)
        self.flavors = {}
        for name, vcpus, ram in (('demo.small', 1, 512),
                                 ('demo.medium', 2, 1024)):
            code, body = self.http(
                'POST', '/flavors', {'flavor': {
                    'name': name, 'vcpus': vcpus, 'ram': ram, 'disk': 1}},
                token='ADMIN_TOKEN', show=False)
            assert code == 200, (code, body)
            self.flavors[name] = body['flavor']['id']
        self.transcript.text('Flavors demo.small (1 vCPU, 512 MiB) and '
                             'demo.medium (2 vCPUs, 1 GiB) created.')

    def create_volume(self, name, multiattach, image_id=None):
        volume = self.cinder.create_volume(name, multiattach, image_id)
        self.volume_ids[name] = volume['id']
        cli = (f'openstack volume create --size 1 '
               f'{"--type multiattach " if multiattach else ""}'
               f'{"--image cirros " if image_id else ""}{name}')
        self.transcript.text(
            f'Cinder (Nova\'s CinderFixture in this process; on a cloud: '
            f'`{cli}`): volume {volume["id"]} "{name}", multiattach '
            f'{multiattach}.')
        return volume['id']

    def multi_create(self):
        self.transcript.heading(
            '1. Three servers in one request, booted from one read-only '
            'multiattach volume')
        self.root_volume = self.create_volume('shared-root', True, IMAGE)
        code, body = self.http('POST', '/servers', {'server': {
            'name': 'hpc', 'flavorRef': self.flavors['demo.small'],
            'networks': 'none', 'min_count': 3, 'max_count': 3,
            'return_reservation_id': True,
            'block_device_mapping_v2': [{
                'uuid': self.root_volume, 'source_type': 'volume',
                'destination_type': 'volume', 'boot_index': 0,
                'attach_mode': 'ro'}]}})
        self.report.expect_status(
            '1 POST /servers min_count=3 attach_mode=ro', 202, code, body)
        assert code == 202, (code, body)
        code, body = self.http(
            'GET', '/servers?reservation_id=' + body['reservation_id'])
        self.server_ids = sorted(
            (s['id'] for s in body['servers']),
            key=lambda i: self.observe.server(i)[
                'OS-EXT-SRV-ATTR:launch_index'])
        statuses = [self.observe.wait_for_server(i, 'ACTIVE')['status']
                    for i in self.server_ids]
        self.report.expect(
            '1 servers of the request', '3 ACTIVE',
            f'{len(statuses)} {", ".join(sorted(set(statuses)))}',
            statuses == ['ACTIVE'] * 3)
        modes = []
        for server_id in self.server_ids:
            attachments = self.observe.volume_attachments(server_id)
            modes += [a['attach_mode'] for a in attachments]
        self.report.expect('1 GET os-volume_attachments',
                           'root volume ro on each',
                           ', '.join(modes), modes == ['ro'] * 3)
        records = self.cinder.attachments(self.root_volume)
        owners = sorted(a['instance_uuid'] for _, a in records)
        self.transcript.text(
            'Cinder\'s attachments of shared-root: ' + '; '.join(
                f'{a["id"][:8]} server {a["instance_uuid"][:8]} '
                f'{a["attach_mode"]} {a["attach_status"]}'
                for _, a in records))
        self.report.expect(
            '1 Cinder attachments', 'one ro attachment per server',
            f'{len(records)}, modes '
            f'{sorted({a["attach_mode"] for _, a in records})}',
            owners == sorted(self.server_ids) and
            all(a['attach_mode'] == 'ro' for _, a in records))

    def attach_modes(self):
        self.transcript.heading(
            '2. A second multiattach volume: read/write on server 1, '
            'read-only on servers 2 and 3')
        self.data_volume = self.create_volume('shared-data', True)
        wanted = dict(zip(self.server_ids, ('rw', 'ro', 'ro')))
        for server_id, mode in wanted.items():
            code, body = self.http(
                'POST', f'/servers/{server_id}/os-volume_attachments',
                {'volumeAttachment': {'volumeId': self.data_volume,
                                      'attach_mode': mode}})
            # Since 2.101 the attach is asynchronous: 202, then watch.
            self.report.expect_status(f'2 attach shared-data {mode}', 202,
                                      code, body)
            self.observe.wait_for_attached(server_id, self.data_volume)
        observed = {}
        for server_id in self.server_ids:
            for attachment in self.observe.volume_attachments(server_id):
                if attachment['volumeId'] == self.data_volume:
                    observed[server_id] = attachment['attach_mode']
        code, body = self.http(
            'GET', f'/servers/{self.server_ids[1]}/os-volume_attachments/'
            f'{self.data_volume}')
        shown = body['volumeAttachment']['attach_mode'] if code == 200 \
            else code
        self.report.expect(
            '2 GET os-volume_attachments (list)', 'rw, ro, ro',
            ', '.join(observed.get(i, '-') for i in self.server_ids),
            observed == wanted)
        self.report.expect(
            '2 GET os-volume_attachments/{volume} (show)', 'ro',
            str(shown), shown == 'ro')

    def guest_disks(self):
        self.transcript.heading('3. The guests\' disks (libvirt domain XML)')
        for number, server_id in enumerate(self.server_ids, 1):
            self.observe.check_guest(f'3 guest disks of server {number}',
                                     server_id)

    def moves(self):
        self.transcript.heading(
            '4. Server 2 (everything read-only): hard reboot, live '
            'migration, resize; still read-only after each')
        self.transcript.text(
            'In this one process, fakelibvirt hands a live-migrated guest '
            'to the destination host, and a resize skips the SSH copy of '
            'the instance directory (the root disk is a volume); '
            'everything else is Nova\'s own code.')
        server_id = self.server_ids[1]
        code, body = self.http('POST', f'/servers/{server_id}/action',
                               {'reboot': {'type': 'HARD'}})
        self.report.expect_status('4 hard reboot', 202, code, body)
        self.observe.wait_for_server(server_id, 'ACTIVE')
        self.observe.check_guest('4 after hard reboot', server_id, show=False)

        source = self.observe.server(server_id)['OS-EXT-SRV-ATTR:host']
        code, body = self.http(
            'POST', f'/servers/{server_id}/action',
            {'os-migrateLive': {'host': None, 'block_migration': 'auto'}},
            token='ADMIN_TOKEN')
        self.report.expect_status('4 live migration', 202, code, body)
        self.observe.wait_for_server(server_id, 'ACTIVE')
        host = self.observe.check_guest('4 after live migration', server_id)
        self.report.expect('4 live migration host', f'not {source}', host,
                           host != source)

        source = host
        code, body = self.http(
            'POST', f'/servers/{server_id}/action',
            {'resize': {'flavorRef': self.flavors['demo.medium']}})
        self.report.expect_status('4 resize', 202, code, body)
        self.observe.wait_for_server(server_id, 'VERIFY_RESIZE')
        host = self.observe.check_guest('4 resized (VERIFY_RESIZE)', server_id,
                                        show=False)
        code, body = self.http('POST', f'/servers/{server_id}/action',
                               {'confirmResize': None})
        self.report.expect_status('4 confirm resize', 204, code, body)
        server = self.observe.wait_for_server(server_id, 'ACTIVE')
        host = self.observe.check_guest('4 after resize', server_id)
        self.report.expect('4 resize host and flavor',
                           f'not {source}, demo.medium',
                           f'{host}, {server["flavor"]["original_name"]}',
                           host != source and
                           server['flavor']['original_name'] == 'demo.medium')

    def refusals(self):
        self.transcript.heading(
            '5. What is refused, and changes nothing')
        server_id = self.server_ids[0]
        self.scratch_volume = self.create_volume('scratch', False)

        before = self.observe.snapshot()
        code, body = self.http(
            'POST', f'/servers/{server_id}/os-volume_attachments',
            {'volumeAttachment': {'volumeId': self.scratch_volume,
                                  'attach_mode': 'ro'}},
            microversion='2.104')
        self.report.expect_status('5 attach_mode at 2.104', 400, code, body,
                                  "'attach_mode' was unexpected")
        self.observe.expect_unchanged('5 attach_mode at 2.104', before)

        code, body = self.http(
            'POST', f'/servers/{server_id}/os-volume_attachments',
            {'volumeAttachment': {'volumeId': self.scratch_volume,
                                  'attach_mode': 'readonly'}})
        self.report.expect_status('5 attach_mode "readonly"', 400, code, body,
                                  "'readonly' is not one of ['ro', 'rw']")
        self.observe.expect_unchanged('5 attach_mode "readonly"', before)

        code, body = self.http('POST', '/servers', {'server': {
            'name': 'local', 'flavorRef': self.flavors['demo.small'],
            'imageRef': IMAGE, 'networks': 'none',
            'block_device_mapping_v2': [{
                'uuid': IMAGE, 'source_type': 'image',
                'destination_type': 'local', 'boot_index': 0,
                'attach_mode': 'ro'}]}})
        self.report.expect_status('5 local BDM with attach_mode', 400, code,
                                  body, 'attach_mode')
        self.observe.expect_unchanged('5 local BDM with attach_mode', before)

        code, body = self.http('POST', '/servers', {'server': {
            'name': 'pair', 'flavorRef': self.flavors['demo.small'],
            'imageRef': IMAGE, 'networks': 'none', 'min_count': 2,
            'block_device_mapping_v2': [{
                'uuid': IMAGE, 'source_type': 'image',
                'destination_type': 'local', 'boot_index': 0,
            }, {
                'uuid': self.scratch_volume, 'source_type': 'volume',
                'destination_type': 'volume', 'boot_index': -1}]}})
        self.report.expect_status('5 multi-create, volume without multiattach',
                                  400, code, body,
                                  'only multiattach volumes can be shared')
        self.observe.expect_unchanged(
            '5 multi-create, volume without multiattach', before)

        missing = '7a0d1c52-1f4b-4c1e-9d55-000000000404'
        code, body = self.http(
            'POST', f'/servers/{server_id}/os-volume_attachments',
            {'volumeAttachment': {'volumeId': missing,
                                  'attach_mode': 'ro'}})
        self.report.expect_status('5 attach of an unknown volume', 404, code,
                                  body, missing)
        self.observe.expect_unchanged('5 attach of an unknown volume', before)

        code, body = self.http('GET', '/servers', token=None, show=False)
        self.report.expect_status('5 GET /servers without a token', 401, code,
                                  body, 'requires authentication')

        host = self.observe.server(server_id)['OS-EXT-SRV-ATTR:host']
        # As a compute not yet upgraded to this series would report.
        old_version = compute_api.MIN_COMPUTE_VOLUME_ATTACH_MODE - 1
        self.deployment.pin_service_version(host, old_version)
        try:
            code, body = self.http(
                'POST', f'/servers/{server_id}/os-volume_attachments',
                {'volumeAttachment': {'volumeId': self.scratch_volume,
                                      'attach_mode': 'ro'}})
        finally:
            self.deployment.pin_service_version(
                host, service_obj.SERVICE_VERSION)
        self.report.expect_status(f'5 ro attach, {host} at service version '
                                  f'{old_version}', 409,
                                  code, body)
        self.observe.expect_unchanged('5 ro attach on an old compute', before)
