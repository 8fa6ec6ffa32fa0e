"""What Nova (34.0.0 plus our series) relies on from Cinder's attachments API.

Each test drives real Cinder code the way Nova does: the v3 REST router
(with the request bodies and microversions python-cinderclient sends for
Nova), cinder.volume.api.API, and a real cinder-volume service
(VolumeManager with Cinder's fake test driver) over the fake RPC
transport, on SQLite. Requests come from a non-admin project member whose
token also carries the service role, as Nova sends a user's request with
a service token. Only setting up volumes uses the admin context.

Each test's docstring says what Nova relies on. HOLDS_ON_29_0_0 records
whether unpatched Cinder 29.0.0 gives it: `tools/series contract cinder`
runs this module on the pristine release and on the patched tree, fails
unless every case holds on the patched tree and the release behaves as
recorded, and prints both.

Run by hand: python nova_contract.py [--json RESULTS] from a Cinder tree,
in a virtualenv with Cinder's test requirements.
"""

import argparse
import http
import json
import sys
import unittest

from cinder.api import versions
from cinder import context
from cinder import objects
from cinder.tests.unit.api import fakes
from cinder.tests.unit import fake_constants as fake
from cinder.tests.unit import test
from cinder.tests.unit import utils as tests_utils
from cinder.volume import api as volume_api

VOLUME_HOST = 'contract-volume'
SERVERS = (fake.INSTANCE_ID, fake.UUID1, fake.UUID2, fake.UUID3)

# Case name -> does unpatched Cinder 29.0.0 give Nova this behaviour?
HOLDS_ON_29_0_0 = {
    'test_multi_create_reserves_per_server': False,
    'test_multi_create_reserves_per_server_read_only': False,
    'test_multi_create_attaches_every_server': False,
    'test_concurrent_reservations_are_discoverable': False,
    'test_reservation_while_another_server_attaches': False,
    'test_reservation_of_in_use_volume_keeps_it_in_use': False,
    'test_read_only_attachment': False,
    'test_read_only_mode_in_connector_only': False,
    'test_read_only_and_read_write_on_one_volume': False,
    'test_volume_flagged_read_only': False,
    'test_volume_flagged_read_write': False,
    'test_read_write_attachment': True,
    'test_mode_needs_3_54': True,
    'test_second_server_refused_without_multiattach': True,
    'test_live_migration_keeps_read_only': False,
    'test_detaching_everything_makes_the_volume_available': True,
}


def libvirt_connector(host, mode=None):
    """The connector Nova's libvirt driver sends, with Nova's additions."""
    connector = {'platform': 'x86_64', 'os_type': 'linux',
                 'ip': '192.0.2.10', 'host': host, 'multipath': False,
                 'initiator': 'iqn.2004-10.com.ubuntu:01:%s' % host,
                 'do_local_attach': False, 'nvme_native_multipath': False,
                 'system uuid': '4c4c4544-0042-3910-8051-b4c04f4e3732',
                 'mountpoint': '/dev/vdb'}
    if mode:
        connector['mode'] = mode
    return connector


class NovaContractTestCase(test.TestCase):
    """The fixture of the cases: a volume service, volume types and
    a non-admin user's REST API, and Nova's calls to it.
    """

    def setUp(self):
        super().setUp()
        self.admin = context.get_admin_context()
        self.start_service('volume', host=VOLUME_HOST)
        user = context.RequestContext(
            fake.USER_ID, fake.PROJECT_ID, is_admin=False,
            roles=['member', 'reader'], service_roles=['service'],
            auth_token='user-token')
        self.app = fakes.wsgi_app(fake_auth_context=user)
        self.multiattach_type = tests_utils.create_volume_type(
            self.admin, name='multiattach',
            extra_specs={'multiattach': '<is> True'})
        self.plain_type = tests_utils.create_volume_type(self.admin,
                                                         name='plain')

    # --- Nova's calls (nova/volume/cinder.py) ------------------------------

    def request(self, method, path, body=None, version='3.44',
                expected=http.HTTPStatus.OK):
        req = fakes.HTTPRequest.blank(
            '/v3/%s%s' % (fake.PROJECT_ID, path), version=version)
        req.method = method
        req.headers['OpenStack-API-Version'] = 'volume %s' % version
        if body is not None:
            req.content_type = 'application/json'
            req.body = json.dumps(body).encode()
        resp = req.get_response(self.app)
        self.assertEqual(expected, resp.status_int,
                         '%s %s: %s' % (method, path, resp.text))
        return resp.json if resp.text else None

    def create(self, volume_id, server, mode=None, connector=None,
               **kwargs):
        """API.attachment_create: the attachment as Cinder returns it."""
        attachment = {'volume_uuid': volume_id, 'instance_uuid': server}
        version = '3.44'
        if connector:
            attachment['connector'] = connector
        if mode == 'ro':
            attachment['mode'] = mode
            version = '3.54'
        body = self.request('POST', '/attachments',
                            {'attachment': attachment}, version=version,
                            **kwargs)
        return body.get('attachment')

    def reserve(self, volume_id, server, mode=None, **kwargs):
        """API.attachment_create without a connector: a reservation."""
        attachment = self.create(volume_id, server, mode, **kwargs)
        return attachment['id'] if attachment else None

    def update(self, attachment_id, host, mode=None):
        """API.attachment_update: the compute host's connector."""
        body = self.request(
            'PUT', '/attachments/%s' % attachment_id,
            {'attachment': {'connector': libvirt_connector(host, mode)}})
        return body['attachment']

    def complete(self, attachment_id):
        self.request('POST', '/attachments/%s/action' % attachment_id,
                     {'os-complete': None},
                     expected=http.HTTPStatus.NO_CONTENT)

    def delete(self, attachment_id):
        self.request('DELETE', '/attachments/%s' % attachment_id)

    def attach(self, volume_id, server, mode=None, connector_mode=None):
        """The whole attach of one server, as Nova's compute does it."""
        attachment_id = self.reserve(volume_id, server, mode)
        attachment = self.update(attachment_id, 'compute-%s' % server[:8],
                                 connector_mode or mode)
        self.complete(attachment_id)
        return attachment

    # --- helpers -----------------------------------------------------------

    def volume(self, multiattach=True, readonly=None):
        """A volume; its readonly flag set as os-update_readonly_flag does."""
        params = {'status': 'available', 'host': VOLUME_HOST,
                  'project_id': fake.PROJECT_ID, 'size': 1,
                  'volume_type_id': self.plain_type.id}
        if multiattach:
            params.update(multiattach=True,
                          volume_type_id=self.multiattach_type.id)
        volume = tests_utils.create_volume(self.admin, **params)
        if readonly is not None:
            volume_api.API().update_readonly_flag(self.admin, volume,
                                                  readonly)
        return volume.id

    def status(self, volume_id):
        volume = objects.Volume.get_by_id(self.admin, volume_id)
        return volume.status, volume.attach_status

    def attachments(self, volume_id):
        volume = objects.Volume.get_by_id(self.admin, volume_id)
        return {a.instance_uuid: (a.attach_status, a.attach_mode)
                for a in volume.volume_attachment}


class ReservationContractTest(NovaContractTestCase):
    """What Nova relies on from reservations and the volume's status:
    a multi-create, attaches at the same time, a second server, and
    the last detach.
    """

    def _multi_create_reservations(self, mode):
        volume_id = self.volume()
        ids = [self.reserve(volume_id, server, mode) for server in SERVERS]
        self.assertEqual(len(SERVERS), len(set(ids)))
        self.assertEqual('reserved', self.status(volume_id)[0])
        expected_mode = mode or 'null'
        self.assertEqual({s: ('reserved', expected_mode) for s in SERVERS},
                         self.attachments(volume_id))

    def test_multi_create_reserves_per_server(self):
        """A multi-create reserves the volume once per server (3.44).

        Nova reserves a multiattach volume for every server of the request
        in nova-api, before any of them is scheduled, so each reservation
        is made while the earlier ones are still reserved.
        """
        self._multi_create_reservations(None)

    def test_multi_create_reserves_per_server_read_only(self):
        """The same with read-only reservations (3.54, mode ro)."""
        self._multi_create_reservations('ro')

    def test_multi_create_attaches_every_server(self):
        """Each server of a multi-create then attaches: all end attached.

        The computes update and complete their attachments in any order
        after all the reservations; every server gets a read-only
        connection and the volume ends in-use.
        """
        volume_id = self.volume()
        ids = {server: self.reserve(volume_id, server, 'ro')
               for server in SERVERS}
        access_modes = {}
        for server in reversed(SERVERS):
            attachment = self.update(ids[server], 'compute-%s' % server[:8],
                                     'ro')
            access_modes[server] = (
                attachment['connection_info']['access_mode'])
            self.complete(ids[server])
        self.assertEqual({s: 'ro' for s in SERVERS}, access_modes)
        self.assertEqual(('in-use', 'attached'), self.status(volume_id))
        self.assertEqual({s: ('attached', 'ro') for s in SERVERS},
                         self.attachments(volume_id))

    def test_concurrent_reservations_are_discoverable(self):
        """The versions document says multi-create reservations are taken.

        Before a multi-create from a multiattach volume Nova reads the
        maximum microversion of the Block Storage API, as it does for
        3.54, and refuses the request (409) before reserving anything
        when it is below 3.72.
        """
        req = fakes.HTTPRequest.blank('/', base_url='http://localhost')
        resp = req.get_response(versions.Versions())
        self.assertEqual(http.HTTPStatus.MULTIPLE_CHOICES, resp.status_int)
        [v3] = [version for version in resp.json['versions']
                if version['id'] == 'v3.0']
        self.assertGreaterEqual(
            tuple(int(n) for n in v3['version'].split('.')), (3, 72))

    def test_reservation_while_another_server_attaches(self):
        """A server reserves while another's attachment is attaching.

        Two users (or two moves) attach one multiattach volume at the same
        time: one compute has updated its attachment, not completed it.
        """
        volume_id = self.volume()
        first = self.reserve(volume_id, SERVERS[0])
        self.update(first, 'compute-a')
        self.assertEqual(('attaching', 'attaching'), self.status(volume_id))
        self.reserve(volume_id, SERVERS[1])
        self.assertEqual(('attaching', 'attaching'), self.status(volume_id))
        self.complete(first)
        self.assertEqual(('in-use', 'attached'), self.status(volume_id))

    def test_reservation_of_in_use_volume_keeps_it_in_use(self):
        """Reserving an attached multiattach volume leaves it in-use.

        Nova shows and checks the volume of an attached server; a second
        server's pending attach must not make it look unattached.
        """
        volume_id = self.volume()
        self.attach(volume_id, SERVERS[0])
        self.reserve(volume_id, SERVERS[1])
        self.assertEqual(('in-use', 'attached'), self.status(volume_id))

    def test_second_server_refused_without_multiattach(self):
        """A volume without multiattach refuses a second server."""
        volume_id = self.volume(multiattach=False)
        self.reserve(volume_id, SERVERS[0])
        self.reserve(volume_id, SERVERS[1],
                     expected=http.HTTPStatus.BAD_REQUEST)
        self.assertEqual([SERVERS[0]], list(self.attachments(volume_id)))

    def test_detaching_everything_makes_the_volume_available(self):
        """Deleting every attachment makes the volume available again."""
        volume_id = self.volume()
        first = self.attach(volume_id, SERVERS[0])
        second = self.reserve(volume_id, SERVERS[1])
        self.delete(first['id'])
        self.delete(second)
        self.assertEqual(('available', 'detached'), self.status(volume_id))


class AttachModeContractTest(NovaContractTestCase):
    """What Nova relies on from attachment modes: read-only and
    read/write attachments, the volume's readonly flag, the 3.54
    microversion, and a live migration's second attachment.
    """

    def test_read_only_attachment(self):
        """A read-only attachment (3.54 mode ro) has access_mode ro.

        Nova's libvirt driver in 34.0.0 makes the guest disk read-only
        only from connection_info's access_mode.
        """
        volume_id = self.volume()
        attachment = self.attach(volume_id, SERVERS[0], mode='ro')
        self.assertEqual('ro', attachment['connection_info']['access_mode'])
        self.assertEqual('ro', attachment['attach_mode'])
        self.assertEqual({SERVERS[0]: ('attached', 'ro')},
                         self.attachments(volume_id))

    def test_read_only_mode_in_connector_only(self):
        """A mode given only in the connector (3.44) is honoured."""
        volume_id = self.volume()
        attachment = self.attach(volume_id, SERVERS[0],
                                 connector_mode='ro')
        self.assertEqual('ro', attachment['connection_info']['access_mode'])
        self.assertEqual('ro', attachment['attach_mode'])

    def test_read_only_and_read_write_on_one_volume(self):
        """Servers attach one multiattach volume ro and rw, either order."""
        for modes in (('ro', 'rw'), ('rw', 'ro')):
            volume_id = self.volume()
            got = {}
            for server, mode in zip(SERVERS, modes):
                attachment = self.attach(volume_id, server, mode=mode)
                got[server] = attachment['connection_info']['access_mode']
            self.assertEqual(dict(zip(SERVERS, modes)), got)

    def test_volume_flagged_read_only(self):
        """A volume flagged read-only is attached read-only."""
        volume_id = self.volume(readonly=True)
        attachment = self.attach(volume_id, SERVERS[0], mode='rw')
        self.assertEqual('ro', attachment['connection_info']['access_mode'])

    def test_volume_flagged_read_write(self):
        """A volume whose readonly flag is 'False' is attached read/write.

        os-update_readonly_flag with false stores the flag as the string
        'False', as Cinder's legacy attach does on every volume it
        attaches, so long-lived clouds have many such volumes. Nova
        attaches one read/write (no mode at create, none in the
        connector): the attachment, as recorded and as the update returns
        it, and the connection's access_mode must all say rw.

        On 29.0.0 attachment create takes any flag as read-only, so the
        attachment is recorded and returned "ro", while access_mode is
        "rw" (the volume service ignores the flag for a non-admin caller).
        """
        volume_id = self.volume(readonly=False)
        self.assertEqual('False', objects.Volume.get_by_id(
            self.admin, volume_id).admin_metadata['readonly'])
        attachment_id = self.reserve(volume_id, SERVERS[0])
        attachment = self.update(attachment_id, 'compute-a')
        self.complete(attachment_id)
        self.assertEqual(
            {'recorded': 'rw', 'update response': 'rw', 'access_mode': 'rw'},
            {'recorded': self.attachments(volume_id)[SERVERS[0]][1],
             'update response': attachment['attach_mode'],
             'access_mode': attachment['connection_info']['access_mode']})

    def test_read_write_attachment(self):
        """A read/write attachment has access_mode rw."""
        volume_id = self.volume()
        attachment = self.attach(volume_id, SERVERS[0])
        self.assertEqual('rw', attachment['connection_info']['access_mode'])

    def test_mode_needs_3_54(self):
        """Cinder refuses a mode before 3.54, so Nova asks for 3.54."""
        volume_id = self.volume()
        self.request('POST', '/attachments', {'attachment': {
            'volume_uuid': volume_id, 'instance_uuid': SERVERS[0],
            'mode': 'ro'}}, version='3.53',
            expected=http.HTTPStatus.BAD_REQUEST)
        self.assertEqual({}, self.attachments(volume_id))

    def test_live_migration_keeps_read_only(self):
        """A live migration's second attachment is read-only too.

        For a live migration the destination compute creates the server's
        second attachment with its connector (and, for a read-only
        attachment, the mode), which a volume without multiattach accepts
        for the same server; it completes it and the source's is deleted.
        """
        volume_id = self.volume(multiattach=False)
        source = self.attach(volume_id, SERVERS[0], mode='ro')
        target = self.create(volume_id, SERVERS[0], mode='ro',
                             connector=libvirt_connector('compute-dest',
                                                         'ro'))
        self.assertEqual('ro', target['connection_info']['access_mode'])
        self.complete(target['id'])
        self.delete(source['id'])
        self.assertEqual({SERVERS[0]: ('attached', 'ro')},
                         self.attachments(volume_id))
        self.assertEqual(('in-use', 'attached'), self.status(volume_id))


class _Collector(unittest.TextTestResult):
    """Keeps each case's outcome and the first line of its failure."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = {}

    def _record(self, test, outcome, err=None):
        detail = ''
        if err is not None:
            # The exception's own lines: after the last frame of the
            # traceback, its source line and its ^^^ marker.
            lines = self._exc_info_to_string(err, test).splitlines()
            frames = [n for n, line in enumerate(lines)
                      if line.startswith('  File ')]
            tail = lines[frames[-1] + 2:] if frames else lines
            detail = ' '.join(line.strip() for line in tail
                              if line.strip().strip('^~'))
        self.outcomes[test._testMethodName] = {'holds': outcome,
                                               'detail': detail[:300]}

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, False, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, False, err)


# The classes of the cases, each run in turn.
CASES = (ReservationContractTest, AttachModeContractTest)


def summary(name):
    """The first line of the docstring of the case `name`."""
    [case] = [getattr(cls, name) for cls in CASES if hasattr(cls, name)]
    return case.__doc__.split('\n')[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--json', help='write the outcomes to this file')
    args = parser.parse_args()
    import cinder
    loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromTestCase(cls)
                               for cls in CASES)
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2,
                                     resultclass=_Collector)
    result = runner.run(suite)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'cinder': cinder.__file__,
                       'holds_on_29_0_0': HOLDS_ON_29_0_0,
                       'docs': {name: summary(name)
                                for name in HOLDS_ON_29_0_0},
                       'outcomes': result.outcomes}, f, indent=2)
    return 0 if result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
