"""The calls the scenario, the fault runs and the benchmarks make to the
real cloud, as the mae member (and as the admin where only an admin
may: hosts, moves, services, Cinder's flags).
"""

from series.cloud import content
from series.cloud import guest
from series.cloud import layout
from series.cloud import rest

PREFIX = 'mae-scenario'
MICROVERSION = '2.105'
# The traits API of placement.
PLACEMENT_MICROVERSION = '1.6'
BOOT_SECONDS = 300


class Failed(Exception):
    """A check that did not hold."""


def check(condition, message):
    if not condition:
        raise Failed(message)


def slot(server):
    """The slot the server's guest writes in: the one create_servers()
    gave its request, plus its place in it.
    """
    return (int(server['metadata'][guest.SLOT_KEY]) +
            server['OS-EXT-SRV-ATTR:launch_index'])


class Cloud:

    def __init__(self, microversion=MICROVERSION):
        # The compute API microversion of every call that names none:
        # 2.104 on a cloud of the pristine releases.
        self.microversion = microversion
        self.member = rest.Session(layout.MEMBER, layout.PROJECT)
        self.member.authenticate()
        self.admin = rest.admin_session()

    # Volumes

    def volume_path(self, suffix=''):
        return f'/{self.member.project_id}/volumes{suffix}'

    def volume(self, volume_id, admin=False):
        """The volume; as the admin, with its attachments' hosts."""
        session = self.admin if admin else self.member
        return session.get('cinder-api', f'/{session.project_id}/volumes/'
                           f'{volume_id}')['volume']

    def create_volume(self, name, multiattach=True, image=None):
        body = {'name': f'{PREFIX}-{name}', 'size': 1,
                'volume_type': content.VOLUME_TYPE if multiattach
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
        return rest.wait(f'volume {volume_id} {"/".join(statuses)}', probe,
                         timeout)

    def rbd_image(self, volume_id):
        """The name of the volume's RBD image: after a migration, that of
        the volume it was copied to (Cinder's name_id).
        """
        volume = self.admin.get('cinder-api', f'/volumes/{volume_id}')[
            'volume']
        return 'volume-' + (volume.get('os-vol-mig-status-attr:name_id') or
                            volume_id)

    def cinder_attachments(self, volume_id):
        """Cinder's attachment records of the volume (volume API 3.27)."""
        return self.admin.get(
            'cinder-api', f'/{self.admin.project_id}/attachments/detail?'
            f'all_tenants=1&volume_id={volume_id}',
            microversion='3.54')['attachments']

    # Images and flavors

    def image(self):
        images = self.member.get('glance-api',
                                 f'/images?name={content.IMAGE}')['images']
        return next(image['id'] for image in images
                    if image['status'] == 'active')

    def flavor(self, name):
        flavors = self.member.get('nova-api', '/flavors')['flavors']
        return next(flavor['id'] for flavor in flavors
                    if flavor['name'] == name)

    # Servers

    def create_servers(self, name, bdm, count=1, microversion=None,
                       expect=202, host=None):
        """POST /servers; the reply (ids looked up by reservation). With
        `host`, on that compute host (2.74), asked for by the admin in the
        member's project (the server is the project's all the same). Each
        server's guest writes in a slot no other server of the run has
        (slot()), given on its config drive.
        """
        body = {'server': {
            'name': f'{PREFIX}-{name}', 'flavorRef': self.flavor('mae.tiny'),
            'networks': 'none', 'min_count': count, 'max_count': count,
            'return_reservation_id': True, 'config_drive': True,
            'metadata': {guest.SLOT_KEY: str(self.free_slots(count))},
            'block_device_mapping_v2': bdm}}
        session = self.member
        if host:
            body['server']['host'] = host
            session = rest.Session(layout.ADMIN, layout.PROJECT)
            session.authenticate()
        return session.call('POST', 'nova-api', '/servers', body,
                            microversion=microversion or self.microversion,
                            expect=expect)

    def free_slots(self, count):
        """The first of `count` consecutive slots that no server of the
        run has.
        """
        taken = {slot(server) for server in self.servers(f'name={PREFIX}')
                 if guest.SLOT_KEY in server['metadata']}
        first = next((first for first in range(guest.SLOTS - count + 1)
                      if taken.isdisjoint(range(first, first + count))),
                     None)
        check(first is not None, f'no {count} consecutive slots free of '
              f'{guest.SLOTS}: the run has {len(taken)} servers')
        return first

    def slot_of(self, server_id):
        return slot(self.server(server_id))

    def reserved(self, reply):
        """The ids of the servers a create_servers() reply made."""
        return sorted(server['id'] for server in self.servers(
            f'reservation_id={reply.body["reservation_id"]}'))

    def servers(self, query=''):
        return self.admin.get('nova-api', f'/servers/detail?all_tenants=1'
                              f'&{query}', microversion=self.microversion)[
                                  'servers']

    def server(self, server_id):
        return self.admin.get('nova-api', f'/servers/{server_id}',
                              microversion=self.microversion)['server']

    def host_of(self, server_id):
        return self.server(server_id)['OS-EXT-SRV-ATTR:host']

    def wait_server(self, server_id, statuses=('ACTIVE',),
                    timeout=BOOT_SECONDS, host=None):
        """Until the server has one of `statuses` and no task (and runs
        on `host` if given).
        """
        def probe():
            server = self.server(server_id)
            if server['status'] == 'ERROR' and 'ERROR' not in statuses:
                # An admin sees the fault's traceback: its last lines say
                # where a non-Nova exception (only named in the message)
                # was raised.
                fault = server.get('fault') or {}
                where = ' | '.join(line.strip() for line in (
                    fault.get('details') or '').strip().splitlines()[-3:])
                raise Failed(f'server {server_id} went to ERROR: '
                             f'{fault.get("message")}' +
                             (f' ({where})' if where else ''))
            done = (server['status'] in statuses and
                    not server['OS-EXT-STS:task_state'] and
                    host in (None, server['OS-EXT-SRV-ATTR:host']))
            return server if done else None
        return rest.wait(f'server {server_id} {"/".join(statuses)}'
                         + (f' on {host}' if host else ''), probe, timeout)

    def delete_server(self, server_id):
        self.admin.call('DELETE', 'nova-api', f'/servers/{server_id}',
                        expect=(204, 404))

    def wait_deleted(self, server_ids, timeout=BOOT_SECONDS):
        rest.wait('servers deleted', lambda: not any(
            server['id'] in server_ids for server in self.servers()),
            timeout)

    def action(self, server_id, body, microversion=None,
               expect=202, admin=False):
        session = self.admin if admin else self.member
        return session.call('POST', 'nova-api',
                            f'/servers/{server_id}/action', body,
                            microversion=microversion or self.microversion,
                            expect=expect)

    def console(self, server_id):
        return self.member.call(
            'POST', 'nova-api', f'/servers/{server_id}/action',
            {'os-getConsoleOutput': {}}, expect=200).body['output']

    # Volume attachments

    def attachments(self, server_id, microversion=None):
        return self.member.get(
            'nova-api', f'/servers/{server_id}/os-volume_attachments',
            microversion=microversion or self.microversion)[
                'volumeAttachments']

    def attached(self, server_id, volume_id):
        return next((attachment for attachment in self.attachments(server_id)
                     if attachment['volumeId'] == volume_id), None)

    def attach(self, server_id, volume_id, mode=None,
               microversion=None, expect=202):
        body = {'volumeId': volume_id}
        if mode:
            body['attach_mode'] = mode
        reply = self.member.call(
            'POST', 'nova-api', f'/servers/{server_id}/os-volume_attachments',
            {'volumeAttachment': body},
            microversion=microversion or self.microversion,
            expect=expect)
        if reply.status < 300:
            self.wait_attached(server_id, volume_id)
        return reply

    def wait_attached(self, server_id, volume_id):
        """Asynchronous since 2.101: done once Cinder has it attached and
        Nova lists it.
        """
        def probe():
            attached = any(
                attachment['server_id'] == server_id and
                attachment.get('attach_status', 'attached') == 'attached'
                for attachment in self.volume(volume_id)['attachments'])
            return attached and self.attached(server_id, volume_id)
        return rest.wait(f'volume {volume_id} attached to {server_id}', probe,
                         BOOT_SECONDS)

    def detach(self, server_id, volume_id):
        self.member.call(
            'DELETE', 'nova-api',
            f'/servers/{server_id}/os-volume_attachments/{volume_id}',
            microversion=self.microversion, expect=202)
        rest.wait(f'volume {volume_id} detached from {server_id}', lambda: (
            not self.attached(server_id, volume_id) and not any(
                attachment['server_id'] == server_id for attachment in
                self.volume(volume_id)['attachments'])), BOOT_SECONDS)

    def retype(self, volume_id, volume_type):
        """Retype an attached volume onto another backend: Cinder copies
        it to a new volume through Nova's swap volume, then gives the new
        one the volume's id.
        """
        self.member.call('POST', 'cinder-api', self.volume_path(
            f'/{volume_id}/action'), {'os-retype': {
                'new_type': volume_type, 'migration_policy': 'on-demand'}},
            expect=202)

        def probe():
            volume = self.admin.get('cinder-api', f'/volumes/{volume_id}')[
                'volume']
            if volume['migration_status'] in ('error', 'failed'):
                raise Failed(f'volume {volume_id}: migration '
                             f'{volume["migration_status"]}')
            return (volume['volume_type'] == volume_type and
                    volume['status'] == 'in-use' and
                    volume['migration_status'] in (None, 'success'))
        rest.wait(f'volume {volume_id} retyped to {volume_type}', probe,
                  BOOT_SECONDS)

    # Placement

    def provider_of(self, host):
        """The resource provider of `host`'s compute node: its hypervisor
        id since compute microversion 2.53.
        """
        found = [hypervisor['id'] for hypervisor in self.admin.get(
            'nova-api', '/os-hypervisors/detail',
            microversion=self.microversion)['hypervisors']
            if hypervisor['service']['host'] == host]
        check(len(found) == 1, f'{len(found)} compute nodes on {host}')
        return found[0]

    def traits(self, host):
        return set(self.admin.get(
            'placement', f'/resource_providers/{self.provider_of(host)}'
            '/traits', microversion=PLACEMENT_MICROVERSION)['traits'])

    def set_trait(self, host, trait, present):
        """Add or remove `trait` on `host`'s provider, as an admin would;
        again on a generation conflict (the compute writing meanwhile).
        """
        path = f'/resource_providers/{self.provider_of(host)}/traits'
        for _ in range(3):
            current = self.admin.get('placement', path,
                                     microversion=PLACEMENT_MICROVERSION)
            traits = set(current['traits']) - {trait}
            if present:
                traits.add(trait)
            reply = self.admin.call(
                'PUT', 'placement', path, {
                    'traits': sorted(traits),
                    'resource_provider_generation':
                        current['resource_provider_generation']},
                microversion=PLACEMENT_MICROVERSION, expect=(200, 409))
            if reply.status == 200:
                return
        raise Failed(f'{path}: three generation conflicts in a row')

    # Compute services

    def compute_service(self, host):
        services = self.admin.get(
            'nova-api', f'/os-services?binary=nova-compute&host={host}',
            microversion=self.microversion)['services']
        check(len(services) == 1, f'{len(services)} compute services on '
              f'{host}')
        return services[0]

    def force_down(self, host, down):
        service = self.compute_service(host)
        self.admin.call('PUT', 'nova-api', f'/os-services/{service["id"]}',
                        {'forced_down': down},
                        microversion=self.microversion,
                        expect=200)

    def delete_leftovers(self):
        """Servers and volumes of an earlier run, so a run starts clean."""
        for server in self.servers(f'name={PREFIX}'):
            self.delete_server(server['id'])
        rest.wait('earlier servers deleted',
                  lambda: not self.servers(f'name={PREFIX}'), BOOT_SECONDS)
        volumes = self.member.get('cinder-api', self.volume_path(
            f'/detail?name~={PREFIX}'))['volumes']
        for volume in volumes:
            if volume['name'].startswith(PREFIX):
                self.member.call('DELETE', 'cinder-api', self.volume_path(
                    f'/{volume["id"]}'), expect=(202, 404))
