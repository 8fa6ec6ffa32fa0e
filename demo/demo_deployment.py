"""Nova's functional libvirt stack in this process, as the demo's fixture."""

import logging
import urllib.parse

import fixtures

from nova import context as nova_context
from nova.db.main import api as db
from nova import exception
from nova import objects
from nova.tests import fixtures as nova_fixtures
from nova.tests.functional.libvirt import base

from demo_constants import COMPUTES
from demo_server import ApiServer
from demo_steps import Scenario


class DemoCinder(nova_fixtures.CinderFixture):
    """CinderFixture that also holds the volumes the scenario creates, and
    answers as Cinder with the companion series: both of its fixes on.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.access_mode_follows_attachment = True
        self.multiattach_reservations_overlap = True

    def create_volume(self, name, multiattach, image_id=None):
        volume = self.fake_vol_create(None, 1, name, None)
        volume['multiattach'] = multiattach
        if image_id:
            volume['bootable'] = True
            volume['volume_image_metadata'] = {'image_id': image_id}
        return volume

    def _is_multiattach(self, volume_id):
        if volume_id in self.volumes:
            return self.volumes[volume_id]['multiattach']
        return super()._is_multiattach(volume_id)

    def fake_get(self, context, volume_id, microversion=None):
        # CinderFixture makes up a volume for any id; Cinder answers 404.
        if volume_id not in self.volumes:
            raise exception.VolumeNotFound(volume_id=volume_id)
        return super().fake_get(context, volume_id, microversion)

    def attachments(self, volume_id=None):
        """(volume id, attachment) for every attachment Cinder holds."""
        return [(vid, dict(attachment))
                for vid, attachments in self.volume_to_attachment.items()
                if volume_id in (None, vid)
                for attachment in attachments.values()]


class Deployment(base.ServersTestBase):
    """Nova's functional libvirt stack, with the API on a real port."""

    # Casts stay casts, as in a deployment: a server builds after the
    # POST has returned, and the client waits for it.
    CAST_AS_CALL = False
    ADMIN_API = True

    def __init__(self, options, report):
        super().__init__('runTest')
        self.options = options
        # Nova's TestCase deletes its attributes after the run: the caller
        # keeps the report.
        self.report = report

    def setUp(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.CinderFixture', DemoCinder))
        super().setUp()
        # Live migration: fakelibvirt hands the guest to the destination.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.migrateToURI3',
            self._migrate_guest))
        # Resize: the libvirt driver copies the instance directory to the
        # destination over SSH; here both hosts are this process and the
        # root disk is a volume, so there is nothing to copy.
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.driver.LibvirtDriver'
            '.migrate_disk_and_power_off', return_value='{}'))
        for hostname in COMPUTES:
            self.start_compute(hostname)
        self.ctxt = nova_context.get_admin_context()
        # The services log their shutdown after the log capture has ended.
        self.addCleanup(logging.disable, logging.INFO)

    def _migrate_guest(self, domain, destination, params, flags):
        host = urllib.parse.urlparse(destination).hostname
        self.computes[host].driver._host.get_connection().createXML(
            params['destination_xml'], 0)
        domain.complete_job()

    def pin_service_version(self, host, version):
        """Make one nova-compute report an older service version.

        The API reads the version from the compute's service record, which
        the compute rewrites on every status report: set both.
        """
        compute = self.computes[host]
        compute.service_ref.version = version
        service = objects.Service.get_by_compute_host(self.ctxt, host)
        db.service_update(self.ctxt, service.id, {'version': version})
        self.report.transcript.text(
            f'(nova-compute on {host} now reports service version '
            f'{version})')

    def runTest(self):
        api = ApiServer(self)
        api.serve_api()
        scenario = Scenario(self, api)
        try:
            scenario.run()
        finally:
            self.write_transcript(api.endpoint)
        self.report.print_summary()
        if self.report.ok and self.options.keep_running:
            api.keep_running(scenario)

    def write_transcript(self, endpoint):
        """Write the transcript, then Nova's log beside it."""
        self.report.write_transcript(endpoint)
        path = self.options.transcript
        (path.parent / 'nova.log').write_text(self.stdlog.logger.output)
