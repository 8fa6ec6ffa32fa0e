"""The scenario's read-only-prefilter step: a host whose provider lacks
COMPUTE_VOLUME_READ_ONLY_ATTACH gets no server with a read-only volume,
at create or on a move, and still takes the others.
"""

import datetime

from series.cloud.client import BOOT_SECONDS
from series.cloud.client import check
from series.cloud.client import Failed
from series.cloud import configs
from series.cloud import fault_aftermath
from series.cloud import hosts
from series.cloud import rest
from series.cloud import services
from series.cloud import steps
from series import config

READ_ONLY_TRAIT = 'COMPUTE_VOLUME_READ_ONLY_ATTACH'
PREFILTER_ATTEMPTS = 2


def read_only_prefilter(tracker):
    """With COMPUTE_VOLUME_READ_ONLY_ATTACH removed from one host's
    provider (as a host whose driver cannot give a guest a read-only
    disk), no server with a read-only volume is scheduled there, at
    create or on a move, while it still takes other servers.

    That host's nova-compute puts the trait back whenever it reads its
    provider from placement again: when its association refresh falls
    due ([compute] resource_provider_association_refresh, 300 s by
    default) and when a write of its own fails on a generation
    conflict, which the trait's removal causes for its next inventory
    update (its memory total, which libvirt reads from the host, is
    not constant on every machine). For the step it runs without
    either (provider_refresh()): no association refresh, no periodic
    resource audit, so the only writes left are those of a claim on
    the host. The checks that need the trait missing
    (prefilter_checks()) send nothing to that host; the trait is read
    after them, then the host takes an rw server
    (prefilter_takes_rw()), scheduled before its claim. They count
    only if the trait was still missing (nothing but this step
    removes it), and run again otherwise, a timeout among them (the
    scheduler may have taken the host back).
    """
    capable, incapable = (host.name for host in hosts.HOSTS)
    root = tracker.new_volume('prefilter', image=tracker.cloud.image())
    provider_refresh(tracker.cloud, incapable, False)
    try:
        return prefilter_attempts(tracker.cloud, root, capable, incapable)
    finally:
        provider_refresh(tracker.cloud, incapable, True)


def prefilter_attempts(cloud, root, capable, incapable):
    """prefilter_checks() until it ran with the trait held, at most
    PREFILTER_ATTEMPTS times: a failure then, or its outcome with
    prefilter_takes_rw()'s.
    """
    for attempt in range(1, PREFILTER_ATTEMPTS + 1):
        cloud.set_trait(incapable, READ_ONLY_TRAIT, False)
        created, error, outcome = [], None, None
        try:
            try:
                outcome = prefilter_checks(cloud, root, capable, incapable,
                                           created)
            except (Failed, config.SeriesError) as failure:
                error = failure
            held = READ_ONLY_TRAIT not in cloud.traits(incapable)
            if held and not error:
                outcome += '; ' + prefilter_takes_rw(
                    cloud, root, incapable, created)
        finally:
            for server_id in created:
                cloud.delete_server(server_id)
            cloud.wait_deleted(created)
            cloud.set_trait(incapable, READ_ONLY_TRAIT, True)
        if held:
            if error:
                raise error
            return outcome
        steps.say(f'attempt {attempt}: nova-compute of {incapable} put '
                  f'{READ_ONLY_TRAIT} back meanwhile'
                  + (f' ({error})' if error else '') + '; again')
    raise Failed(f'{READ_ONLY_TRAIT} came back during each of '
                 f'{PREFILTER_ATTEMPTS} attempts')


def provider_refresh(cloud, host_name, refresh):
    """Restart `host_name`'s nova-compute with its configuration as
    `cloud up` writes it (`refresh` true), or without association
    refresh and periodic resource audit (configs.nova_compute());
    return once it has reported its state after the start, which it
    does when its start is over, its provider read from placement.
    """
    host = hosts.by_name(host_name)
    configs.write_nova_compute(host, refresh_provider=refresh)
    compute = services.compute(host)
    compute.stop()
    since = datetime.datetime.now(datetime.timezone.utc)
    services.start(compute, timeout=180, admin=cloud.admin)
    rest.wait(f'nova-compute of {host_name} reported after its start',
              lambda: compute.reports_as in services.reported_up(
                  cloud.admin, since=since), 240)


# What the scheduler's NoValidHost says, in a server's fault and in the
# details of the instance action event that raised it (2.84).
NO_VALID_HOST = 'No valid host'
MIGRATE_EVENT = 'conductor_migrate_server'


def prefilter_boot(cloud, root, name, mode, created, host=None):
    reply = cloud.create_servers(name, [{
        'boot_index': 0, 'uuid': root, 'source_type': 'volume',
        'destination_type': 'volume', 'attach_mode': mode}], host=host)
    [server_id] = cloud.reserved(reply)
    created.append(server_id)
    return server_id


def prefilter_checks(cloud, root, capable, incapable, created):
    """What the scheduler does without the trait on `incapable`: an
    ro server asked there refused, one asked nowhere on `capable`,
    its cold migration refused. None of it reaches `incapable`.
    """
    refused = prefilter_boot(cloud, root, 'prefilter-ro-asked', 'ro',
                             created, host=incapable)
    server = cloud.wait_server(refused, ('ERROR',))
    check(NO_VALID_HOST in server.get('fault', {}).get('message', ''),
          f'ro on {incapable}: {server["status"]}, fault '
          f'{server.get("fault")}')
    read_only = prefilter_boot(cloud, root, 'prefilter-ro', 'ro', created)
    host = cloud.wait_server(read_only)['OS-EXT-SRV-ATTR:host']
    check(host == capable, f'ro server on {host}')

    cloud.action(read_only, {'migrate': None}, admin=True)

    def migration_failed():
        _, events = fault_aftermath.latest_events(cloud, read_only)
        return next((event for event in events
                     if event['event'] == MIGRATE_EVENT and
                     event['result'] == 'Error'), None)
    event = rest.wait(f'{MIGRATE_EVENT} Error', migration_failed,
                      BOOT_SECONDS)
    details = event.get('details') or ''
    check(NO_VALID_HOST in details, f'the cold migration failed, not for '
          f'want of a host: {MIGRATE_EVENT} {details!r}')
    host = cloud.wait_server(read_only)['OS-EXT-SRV-ATTR:host']
    check(host == capable, f'ro server on {host} after the migration')
    return (f'{READ_ONLY_TRAIT} removed from {incapable}: ro asked on '
            f'{incapable} -> ERROR (No valid host); ro -> {capable}; '
            f'cold migration of the ro server refused ({MIGRATE_EVENT}: '
            f'{details}), still on {capable}')


def prefilter_takes_rw(cloud, root, incapable, created):
    """An rw server asked on `incapable` runs there."""
    read_write = prefilter_boot(cloud, root, 'prefilter-rw-asked', 'rw',
                                created, host=incapable)
    host = cloud.wait_server(read_write)['OS-EXT-SRV-ATTR:host']
    check(host == incapable, f'rw server on {host}')
    return f'rw asked on {incapable} -> ACTIVE there'
