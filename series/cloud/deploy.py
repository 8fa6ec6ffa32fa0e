"""`cloud up`, `cloud down` and `cloud status`."""

import concurrent.futures
import os
import shutil
import socket
import time

from series.cloud import ceph
from series.cloud import configs
from series.cloud import content
from series.cloud import guest
from series.cloud import hosts
from series.cloud import layout
from series.cloud import network
from series.cloud import releases
from series.cloud import rest
from series.cloud import service_venv
from series.cloud import services
from series.cloud.services import manage
from series.cloud.services import rabbitmqctl
from series import config
from series import process
from series import queue

# What runs from the patched work trees while the cloud is up
# (queue.mark_in_use()).
IN_USE = 'the real cloud (`tools/series cloud down` stops it)'


def say(message):
    process.say(f'cloud: {message}')


def cluster():
    return ceph.Cluster(layout.directory() / 'ceph', layout.PORTS['ceph-mon'])


def mariadb(sql):
    process.run(['mariadb', '--protocol=socket', '-u', 'root'], input=sql)


def setup_host():
    process.run([config.ROOT / 'tools' / 'setup-test-host', '--cloud'],
                capture=False)


def databases(new_cloud):
    """The cloud's MariaDB user and databases and its RabbitMQ virtual
    host. A new cloud (no password yet) first drops what a cloud whose
    state directory is gone left behind (a machine copied while a cloud
    was up, a removed checkout): Nova's cell mappings in those databases
    hold that cloud's password, which no longer opens them.
    """
    statements = []
    if new_cloud:
        statements += [f'DROP DATABASE IF EXISTS {name};'
                       for name in layout.DATABASES]
    password = layout.password()
    for host in ('localhost', layout.HOST):
        statements += [
            f"CREATE USER IF NOT EXISTS '{layout.DB_USER}'@'{host}' "
            f"IDENTIFIED BY '{password}';",
            f"ALTER USER '{layout.DB_USER}'@'{host}' "
            f"IDENTIFIED BY '{password}';"]
        statements += [f"GRANT ALL PRIVILEGES ON {name}.* TO "
                       f"'{layout.DB_USER}'@'{host}';"
                       for name in layout.DATABASES]
    statements += [f'CREATE DATABASE IF NOT EXISTS {name} CHARACTER SET '
                   'utf8mb4;' for name in layout.DATABASES]
    mariadb('\n'.join(statements))
    vhosts = rabbitmqctl('list_vhosts').stdout.split()
    if new_cloud and layout.RABBIT_VHOST in vhosts:
        rabbitmqctl('delete_vhost', layout.RABBIT_VHOST)
        vhosts.remove(layout.RABBIT_VHOST)
    if layout.RABBIT_VHOST not in vhosts:
        rabbitmqctl('add_vhost', layout.RABBIT_VHOST)
    rabbitmqctl('set_permissions', '-p', layout.RABBIT_VHOST, 'guest',
                '.*', '.*', '.*')


def sync_nova():
    nova = ('nova-manage', '--config-file', services.conf('nova', 'nova.conf'))
    manage(*nova, 'api_db', 'sync')
    manage(*nova, 'cell_v2', 'map_cell0', '--database_connection',
           layout.database_url('mae_nova_cell0'))
    if 'cell1' not in manage(*nova, 'cell_v2', 'list_cells').stdout:
        manage(*nova, 'cell_v2', 'create_cell', '--name', 'cell1')
    manage(*nova, 'db', 'sync')


def sync_databases():
    """Every schema, two at a time (the machine has two cores)."""
    syncs = {
        'placement': lambda: manage('placement-manage', '--config-dir',
                                    layout.etc('placement'), 'db', 'sync'),
        'nova': sync_nova,
        'cinder': lambda: manage('cinder-manage', '--config-file',
                                 services.conf('cinder', 'cinder.conf'),
                                 'db', 'sync'),
        'glance': lambda: manage('glance-manage', '--config-file',
                                 services.conf('glance', 'glance-api.conf'),
                                 'db_sync'),
        'neutron': lambda: manage(
            'neutron-db-manage', '--config-file',
            services.conf('neutron', 'neutron.conf'), '--config-file',
            services.conf('neutron', 'ml2_conf.ini'), 'upgrade', 'heads'),
    }

    def sync(name):
        started = time.monotonic()
        syncs[name]()
        say(f'{name} database ready ({time.monotonic() - started:.0f}s)')

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for future in [pool.submit(sync, name) for name in syncs]:
            future.result()


def keystone_bootstrap():
    etc = layout.etc('keystone')
    conf = ('--config-dir', etc)
    manage('keystone-manage', *conf, 'db_sync')
    for setup, keys in (('fernet_setup', 'fernet-keys'),
                        ('credential_setup', 'credential-keys')):
        if not (etc / keys).exists():
            manage('keystone-manage', *conf, setup, '--keystone-user', 'root',
                   '--keystone-group', 'root')
    identity = layout.url('keystone', '/v3')
    # From the environment, the password stays out of the process list
    # and out of the error raised if the command fails.
    manage('keystone-manage', *conf, 'bootstrap', '--bootstrap-admin-url',
           identity, '--bootstrap-internal-url', identity,
           '--bootstrap-public-url', identity, '--bootstrap-region-id',
           layout.REGION, env={'OS_BOOTSTRAP_PASSWORD': layout.password()})


def ensure(admin, collection, name, body, query=None):
    """The id of the Keystone `collection` entry named `name`, created
    with `body` if missing.
    """
    found = admin.get('keystone', f'/{collection}?name={query or name}')
    if found[collection]:
        return found[collection][0]['id']
    singular = collection[:-1]
    reply = admin.call('POST', 'keystone', f'/{collection}',
                       {singular: dict(body, name=name)}, expect=201)
    return reply.body[singular]['id']


def identity_content(admin):
    """The service project and users, the mae project and its member,
    and the catalog.
    """
    password = layout.password()
    roles = {name: ensure(admin, 'roles', name, {})
             for name in ('admin', 'manager', 'member', 'reader', 'service')}
    service_project = ensure(admin, 'projects', 'service',
                             {'domain_id': 'default'})
    mae_project = ensure(admin, 'projects', layout.PROJECT,
                         {'domain_id': 'default'})
    admin_project = ensure(admin, 'projects', 'admin', {})
    grants = [(layout.MEMBER, mae_project, 'member'),
              (layout.ADMIN, mae_project, 'admin'),
              (layout.ADMIN, admin_project, 'admin')]
    for user in layout.SERVICE_USERS:
        grants += [(user, service_project, 'admin'),
                   (user, service_project, 'service')]
    users = {}
    for user, project, role in grants:
        if user not in users:
            users[user] = ensure(admin, 'users', user, {
                'domain_id': 'default', 'password': password})
        admin.call('PUT', 'keystone', f'/projects/{project}/users/'
                   f'{users[user]}/roles/{roles[role]}', expect=204)
    for kind, name, service, path in layout.CATALOG:
        service_id = ensure(admin, 'services', name, {'type': kind})
        existing = admin.get('keystone',
                             f'/endpoints?service_id={service_id}')
        have = {entry['interface'] for entry in existing['endpoints']}
        for interface in {'public', 'internal'} - have:
            admin.call('POST', 'keystone', '/endpoints', {'endpoint': {
                'service_id': service_id, 'interface': interface,
                'region_id': layout.REGION,
                'url': layout.url(service, path)}}, expect=201)


def compute_content(admin, image_path):
    """Flavors, the guest images, the servers' network, the volume
    types.
    """
    flavors = {flavor['name'] for flavor in admin.get(
        'nova-api', '/flavors')['flavors']}
    for name, ram in content.FLAVORS:
        if name not in flavors:
            admin.call('POST', 'nova-api', '/flavors', {'flavor': {
                'name': name, 'ram': ram, 'vcpus': 1, 'disk': 1}},
                expect=200)
    # A guest whose init changed replaces the one uploaded before.
    version = guest.version()
    for name, properties in content.IMAGES.items():
        images = admin.get('glance-api', f'/images?name={name}')['images']
        for image in images:
            if image.get('mae_guest_init') != version:
                admin.call('DELETE', 'glance-api', f'/images/{image["id"]}',
                           expect=204)
        if not any(image['status'] == 'active' and
                   image.get('mae_guest_init') == version
                   for image in images):
            image = admin.call('POST', 'glance-api', '/images', {
                'name': name, 'disk_format': 'raw',
                'container_format': 'bare', 'visibility': 'public',
                'hw_disk_bus': 'virtio', 'min_ram': 128,
                'mae_guest_init': version, **properties}, expect=201).body
            admin.call('PUT', 'glance-api', f'/images/{image["id"]}/file',
                       image_path.read_bytes(), expect=204)
    network.content(admin)
    first, second = configs.CINDER_BACKENDS
    types = {kind['name']: kind['id'] for kind in admin.get(
        'cinder-api', '/types')['volume_types']}
    wanted = {content.VOLUME_TYPE: {'multiattach': '<is> True',
                                    'volume_backend_name': first},
              content.OTHER_POOL_TYPE: {'volume_backend_name': second}}
    for name, extra_specs in wanted.items():
        if name not in types:
            admin.call('POST', 'cinder-api', '/types', {'volume_type': {
                'name': name, 'os-volume-type-access:is_public': True,
                'extra_specs': extra_specs}}, expect=200)
    # Volumes of the default type stay on the first backend. Set once:
    # Cinder refuses to change the extra specs of a type in use, as it
    # is when `up` runs again on a cloud with volumes.
    default_specs = f'/types/{types["__DEFAULT__"]}/extra_specs'
    if admin.get('cinder-api', default_specs)['extra_specs'].get(
            'volume_backend_name') != first:
        admin.call('POST', 'cinder-api', default_specs, {'extra_specs': {
            'volume_backend_name': first}}, expect=200)


def port_in_use(port, address=layout.HOST):
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((address, port)) == 0


def check_ports():
    """Refuse to start where another cloud (or any program) has one of
    this cloud's ports: its services would answer in place of ours.
    """
    ours = {service.port for service in services.all_services()
            if service.port and service.pid()}
    if cluster().pid('mon.a'):
        ours.add(layout.PORTS['ceph-mon'])
    taken = [f'{name} ({port})' for name, port in layout.PORTS.items()
             if port not in ours and port_in_use(port)]
    running = {service.host for service in services.hypervisors()
               if service.name.startswith('libvirtd-') and service.pid()}
    for host in hosts.HOSTS:
        if host not in running and port_in_use(hosts.LIBVIRT_PORT,
                                               host.address):
            taken.append(f'libvirtd of {host.name} ({host.address}:'
                         f'{hosts.LIBVIRT_PORT})')
    if taken:
        raise config.SeriesError(
            f'ports of this cloud are taken by another process: '
            f'{", ".join(taken)}; is a cloud of another checkout running? '
            '(`tools/series cloud down` there)')


def mark_trees_in_use():
    """The work trees the services run from marked as in use: apply
    refuses to rebuild them under the running cloud.
    """
    for project in service_venv.patched_projects():
        queue.mark_in_use(project, IN_USE)


def unmark_trees():
    for project in config.load_projects().values():
        queue.unmark_in_use(project)


def up():
    started = time.monotonic()
    if os.geteuid() != 0:
        raise config.SeriesError('the cloud runs as root: it starts a '
                                 'libvirtd per compute host in namespaces '
                                 'of its own, and QEMU as its user')
    check_ports()
    new_cloud = not layout.password_path().exists()
    say('checking the host (Debian packages, MariaDB, RabbitMQ)')
    setup_host()
    service_venv.ensure()
    mark_trees_in_use()
    if releases.PRISTINE in releases.current().values():
        releases.ensure_pristine()
    layout.directory().mkdir(parents=True, exist_ok=True)
    say('building the guest image')
    image_path = guest.build()
    if network.up():
        say(f'servers\' network: bridge {network.BRIDGE} ({network.GATEWAY}'
            f'/{network.SUBNET.prefixlen}), '
            f'{", ".join(network.devices()[1:])}')
    say('starting Ceph (monitor, manager, OSD)')
    storage = cluster()
    storage.up()
    for pool in (*configs.CINDER_BACKENDS.values(), configs.IMAGES_POOL):
        storage.create_pool(pool)
    databases(new_cloud)
    ceph.write_cli_wrapper(layout.directory() / 'bin')
    hosts.make_mount_points()
    for host in hosts.HOSTS:
        hosts.prepare(host)
    configs.write_all()
    keystone_bootstrap()
    first = [*services.hypervisors(), services.by_name('keystone')]
    for service in first:
        say(f'{"starting" if service.pid() is None else "running:"} '
            f'{service.name}')
        services.start(service)
    admin = rest.admin_session()
    identity_content(admin)
    say('syncing the databases')
    sync_databases()
    for service in services.all_services():
        if service in first:
            continue
        say(f'{"starting" if service.pid() is None else "running:"} '
            f'{service.name}')
        services.start(service, timeout=180, admin=admin)
        if service.name == 'neutron-api':
            # The first query configures the SQLAlchemy mappers: before
            # it, neutron 29.0.0 fails listing ports (no
            # Port.port_forwardings yet), which Nova does first.
            admin.call('GET', 'neutron-api', '/networks', expect=200)
    manage('nova-manage', '--config-file', services.conf('nova', 'nova.conf'),
           'cell_v2', 'discover_hosts')
    rest.wait('both compute hosts in Placement', lambda: {
        provider['name'] for provider in admin.get(
            'placement', '/resource_providers')['resource_providers']} >= {
                host.name for host in hosts.HOSTS}, timeout=120)
    say('flavors, guest images, network and volume types')
    compute_content(admin, image_path)
    path = layout.clouds_yaml()
    say(f'up in {time.monotonic() - started:.0f}s; clouds mae and mae-admin '
        f'in {path.relative_to(config.ROOT)}')


def keep_last_run():
    """Move the cloud's logs and reports to layout.last_run(), in place
    of the previous cloud's; their names, or none when it had none.
    """
    kept = [name for name in layout.KEPT_BY_DOWN
            if (layout.directory() / name).exists()]
    if kept:
        shutil.rmtree(layout.last_run(), ignore_errors=True)
        layout.last_run().mkdir(parents=True)
        for name in kept:
            shutil.move(layout.directory() / name, layout.last_run() / name)
    return kept


def down():
    """Stop what up started (by PID), each host's domains first, remove
    its databases, RabbitMQ virtual host, Ceph cluster and state; keep
    the virtualenv and the guest image, and the logs and reports in
    layout.last_run().
    """
    for host in hosts.HOSTS:
        removed = hosts.remove_domains(host)
        if removed:
            say(f'{host.name}: removed {", ".join(removed)}')
    stopped = services.stop_all(services.all_services())
    if stopped:
        say(f'stopped {", ".join(stopped)}')
    unmark_trees()
    for host in hosts.HOSTS:
        left = hosts.kill_qemus(host)
        if left:
            say(f'{host.name}: killed the QEMU of {", ".join(left)}, left '
                'without its libvirtd')
    removed = network.down()
    if removed:
        say(f'removed {", ".join(removed)}')
    left = cluster().down()
    if left:
        say(f'Ceph daemons killed after not stopping: {", ".join(left)}')
    if shutil.which('mariadb'):
        mariadb('\n'.join(f'DROP DATABASE IF EXISTS {name};'
                          for name in layout.DATABASES) +
                f"\nDROP USER IF EXISTS '{layout.DB_USER}'@'localhost';"
                f"\nDROP USER IF EXISTS '{layout.DB_USER}'@'{layout.HOST}';")
    if shutil.which('rabbitmqctl'):
        rabbitmqctl('delete_vhost', layout.RABBIT_VHOST, check=False)
    kept = keep_last_run()
    if kept:
        say(f'{", ".join(kept)} kept in '
            f'{layout.last_run().relative_to(config.ROOT)}')
    keep = guest.guest_dir()
    for entry in (layout.directory().iterdir()
                  if layout.directory().exists() else ()):
        if entry != keep:
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    say('down')


def status():
    """[(name, PID or None, port or None, healthy: True/False/None)]."""
    rows = []
    admin = None
    try:
        admin = rest.admin_session()
    except (config.SeriesError, OSError):
        pass
    up = services.reported_up(admin) if admin else None
    for service in services.all_services():
        rows.append((service.name, service.pid(), service.port or None,
                     services.health(service, admin, up)))
    for daemon, pid in cluster().status():
        port = layout.PORTS['ceph-mon'] if daemon == 'mon.a' else None
        rows.append((f'ceph {daemon}', pid, port, pid is not None))
    return rows


def print_status(rows):
    width = max([18] + [len(row[0]) for row in rows])
    process.say(f'{"service":{width}} {"pid":>8} {"port":>6}  health')
    for name, pid, port, healthy in rows:
        health = {True: 'healthy', False: 'not running' if pid is None
                  else 'unhealthy', None: 'unknown (no token)'}[healthy]
        process.say(f'{name:{width}} {pid or "-":>8} {port or "-":>6}  '
                    f'{health}')
    return 0 if all(row[3] for row in rows) else 1
