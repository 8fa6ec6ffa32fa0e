"""The configuration files of the real cloud's services, one directory
per service under .work/cloud/etc/.
"""

import shutil

from series.cloud import hosts
from series.cloud import layout
from series.cloud import network
from series.cloud import service_venv
from series import config


# The host name of nova-api, -conductor and -scheduler and of Cinder's
# services in os-services.
CONTROL_HOST = 'mae-control'
# The Ceph pool of image-backed servers' disks.
IMAGES_POOL = 'vms'
# Cinder's backends, by name: their Ceph pools.
CINDER_BACKENDS = {'ceph': 'volumes', 'ceph2': 'volumes2'}


def auth(section, user, **extra):
    """A keystoneauth password section for `user` of the service
    project.
    """
    lines = [f'[{section}]', 'auth_type = password',
             f'auth_url = {layout.url("keystone", "/v3")}',
             f'username = {user}', f'password = {layout.password()}',
             'project_name = service', 'user_domain_name = Default',
             'project_domain_name = Default',
             f'region_name = {layout.REGION}']
    lines += [f'{key} = {value}' for key, value in extra.items()]
    return '\n'.join(lines) + '\n'


def authtoken(user, service_type):
    """keystonemiddleware, requiring the service token Nova and Cinder
    send each other (service_token_roles_required).
    """
    return auth('keystone_authtoken', user,
                www_authenticate_uri=layout.url('keystone', '/v3'),
                service_type=service_type,
                service_token_roles_required='true')


def privsep(conf, *sections):
    """oslo.privsep starts `sudo privsep-helper` by default; the cloud
    runs as root, with the virtualenv's helper.
    """
    helper = f'{service_venv.bin("privsep-helper")} --config-file {conf}'
    return ''.join(f'[{section}]\nhelper_command = {helper}\n\n'
                   for section in sections)


def common(state, defaults):
    """[DEFAULT] with the RabbitMQ and state settings every Nova, Cinder
    and Neutron service shares, then `defaults`, then the locks.
    """
    state.mkdir(parents=True, exist_ok=True)
    return f"""\
[DEFAULT]
debug = true
transport_url = {layout.transport_url()}
state_path = {state}
{defaults}
[oslo_concurrency]
lock_path = {state / 'lock'}

[oslo_messaging_notifications]
driver = noop

"""


def keystone():
    etc = layout.etc('keystone')
    return {'keystone.conf': f"""\
[DEFAULT]
debug = true

[database]
connection = {layout.database_url('mae_keystone')}

[token]
provider = fernet

[fernet_tokens]
key_repository = {etc / 'fernet-keys'}

[fernet_receipts]
key_repository = {etc / 'fernet-keys'}

[credential]
key_repository = {etc / 'credential-keys'}
"""}


def placement():
    return {'placement.conf': f"""\
[DEFAULT]
debug = true

[api]
auth_strategy = keystone

[placement_database]
connection = {layout.database_url('mae_placement')}

{authtoken('placement', 'placement')}
"""}


def nova():
    """nova.conf for nova-api, -conductor and -scheduler, and for each
    compute host compute-<key>.conf for its nova-compute, which, as on a
    real compute host, has no database credentials (it goes through
    nova-conductor).
    """
    etc = layout.etc('nova')
    shutil.copy(config.get_project('nova').tree / 'etc/nova/api-paste.ini',
                etc / 'api-paste.ini')
    files = {nova_compute_path(host).name: nova_compute(host)
             for host in hosts.HOSTS}
    conf = etc / 'nova.conf'
    files['nova.conf'] = common(layout.directory() / 'nova', f"""\
host = {CONTROL_HOST}
{NOVA_DEFAULTS}""") + f"""\
[wsgi]
api_paste_config = {etc / 'api-paste.ini'}

[api]
auth_strategy = keystone

[api_database]
connection = {layout.database_url('mae_nova_api')}

[database]
connection = {layout.database_url('mae_nova')}

[conductor]
workers = 1

[scheduler]
workers = 1
discover_hosts_in_cells_interval = -1

[libvirt]
{nova_libvirt()}
{authtoken('nova', 'compute')}
{nova_clients(conf)}"""
    return files


NOVA_DEFAULTS = f"""\
my_ip = {layout.HOST}
compute_driver = libvirt.LibvirtDriver
# Two compute hosts: a resize moves the server to the other one.
allow_resize_to_same_host = false
# One service of each kind here: no periodic bursts of guests at once.
max_concurrent_builds = 6
# Two cores would give eight VCPUs; the guests are tiny and mostly idle,
# and tempest runs beside the scenario's servers.
cpu_allocation_ratio = 16.0
# The guest has no ACPI power button handler: a clean shutdown (stop,
# shelve, resize) would wait the whole default minute.
shutdown_timeout = 3
# At SIGTERM, nova-compute 34.0.0 in its threading mode waits out this
# whole timeout (160 s by default): the libvirt driver's connection event
# thread never ends, and the executor shutdown waits for it. `cloud down`
# destroys the guests first and keeps no task worth waiting for.
manager_shutdown_timeout = 10
"""


def nova_libvirt():
    """The [libvirt] options of every Nova service."""
    return f"""\
virt_type = qemu
cpu_mode = none
# A guest still booting under TCG misses the first unplug request: ask
# again after 5 seconds rather than 20.
device_detach_timeout = 5
# Image-backed servers' disks on Ceph too: every disk is shared between
# the hosts, so live migration needs no block migration.
images_type = rbd
images_rbd_pool = {IMAGES_POOL}
images_rbd_ceph_conf = {layout.directory() / 'ceph' / 'ceph.conf'}
"""


def nova_clients(conf):
    """How Nova reaches the other services, and its privsep helper."""
    return f"""\
[vnc]
enabled = false

# As in a rolling upgrade (grenade's too): no service sends a compute RPC
# version that the oldest nova-compute cannot read. Each service computes
# the cap when it first sends one and keeps it until restarted.
[upgrade_levels]
compute = auto

{auth('cinder', 'nova', os_region_name=layout.REGION,
       catalog_info='block-storage:cinder:publicURL')}
{auth('placement', 'placement')}
{auth('neutron', 'neutron')}
{auth('service_user', 'nova', send_service_user_token='true')}
[glance]
region_name = {layout.REGION}

{privsep(conf, 'nova_sys_admin', 'privsep_osbrick')}"""


def nova_compute_path(host):
    return layout.etc('nova') / f'compute-{host.key}.conf'


def write_nova_compute(host, refresh_provider=True):
    """Write the compute host's configuration again (see nova_compute())."""
    nova_compute_path(host).write_text(nova_compute(host, refresh_provider))


def nova_compute(host, refresh_provider=True):
    """A compute host's configuration. The state path is the same string
    on both hosts, each host's own directory behind it in the host's
    namespaces (series.cloud.hosts). Without `refresh_provider`,
    nova-compute reads its provider from placement at start only, and
    updates it only for a claim.
    """
    state = hosts.compute_state()
    conf = nova_compute_path(host)
    audit = '' if refresh_provider else """\
# No periodic resource audit: the provider is updated only for a claim.
update_resources_interval = -1
"""
    refresh = '' if refresh_provider else """\
[compute]
# Nova-compute reads its provider (traits, inventories, aggregates) from
# placement again each time this many seconds have passed, and then puts
# back any trait of its driver's capabilities that it finds missing;
# 0: only when its cache is empty (at start, after a generation conflict).
resource_provider_association_refresh = 0

"""
    return common(state, f"""\
host = {host.name}
instances_path = {state / 'instances'}
{NOVA_DEFAULTS}{audit}""") + f"""\
[libvirt]
{nova_libvirt()}
# The host's libvirtd, through the socket its namespace sees.
connection_uri = qemu:///system
# Where the other host's libvirtd and QEMU send a live migration.
live_migration_scheme = tcp
live_migration_inbound_addr = {host.address}
# The address of cold migration and resize (migration_inbound_addr) stays
# my_ip, the same on both hosts, so Nova takes the instance directory for
# shared and copies nothing over SSH: the servers have no disk files (the
# disks are RBD volumes and RBD images).

[workarounds]
# Nova takes RBD disks for shared storage and then leaves the instance
# directory behind when an evacuated server's host comes back or a resize
# is reverted (bugs 1414895 and 1761062); here each host's directory is
# its own, so a later live migration back to that host would fail with
# DestinationDiskExists. Nova's own workaround for that, safe because the
# instances path is not shared between the hosts.
ensure_libvirt_rbd_instance_dir_cleanup = true

{refresh}{nova_clients(conf)}"""


def rbd_backends():
    return '\n'.join(f"""\
[{name}]
volume_driver = cinder.volume.drivers.rbd.RBDDriver
volume_backend_name = {name}
rbd_pool = {pool}
rbd_ceph_conf = {layout.directory() / 'ceph' / 'ceph.conf'}
""" for name, pool in CINDER_BACKENDS.items())


def cinder():
    etc = layout.etc('cinder')
    state = layout.directory() / 'cinder'
    conf = etc / 'cinder.conf'
    for name in ('api-paste.ini', 'resource_filters.json'):
        shutil.copy(config.get_project('cinder').tree / 'etc/cinder' / name,
                    etc / name)
    return {'cinder.conf': common(state, f"""\
my_ip = {layout.HOST}
host = mae-volume
auth_strategy = keystone
api_paste_config = {etc / 'api-paste.ini'}
# Two RBD backends on two pools of the one Ceph: an attached volume
# retyped from one to the other is migrated by Cinder through Nova's swap
# volume, which Nova lets only Cinder call (bug 2112187).
enabled_backends = {','.join(CINDER_BACKENDS)}
glance_api_servers = {layout.url('glance-api')}
image_conversion_dir = {state / 'conversion'}
osapi_volume_workers = 1
# The scenario keeps about ten volumes in its project, Cinder's default
# quota; openstacksdk's functional tests then create theirs there too.
quota_volumes = 50
# The filters users may list by (name, status...): without the file,
# Cinder refuses every filter of a non-admin caller, `openstack server add
# volume SERVER VOLUME-NAME` included, and Nova's check for dangling
# attachments at a hard reboot (GET /attachments?instance_id=).
resource_query_filters_file = {etc / 'resource_filters.json'}
""") + f"""\
[database]
connection = {layout.database_url('mae_cinder')}

{rbd_backends()}
{authtoken('cinder', 'block-storage')}
{auth('nova', 'nova', interface='public')}
{auth('service_user', 'cinder', send_service_user_token='true')}
{privsep(conf, 'cinder_sys_admin', 'privsep_osbrick')}"""}


def glance():
    state = layout.directory() / 'glance'
    venv_etc = service_venv.path() / 'etc' / 'glance'
    shutil.copy(venv_etc / 'glance-api-paste.ini',
                layout.etc('glance') / 'glance-api-paste.ini')
    return {'glance-api.conf': f"""\
[DEFAULT]
debug = true
enabled_backends = file:file

[database]
connection = {layout.database_url('mae_glance')}

[glance_store]
default_backend = file

[file]
filesystem_store_datadir = {state / 'images'}

[os_glance_staging_store]
filesystem_store_datadir = {state / 'staging'}

[os_glance_tasks_store]
filesystem_store_datadir = {state / 'tasks'}

[paste_deploy]
flavor = keystone

[oslo_concurrency]
lock_path = {state / 'lock'}

{authtoken('glance', 'image')}"""}


def neutron():
    """neutron.conf and ml2_conf.ini of neutron-api and neutron-rpc-server,
    and for each compute host macvtap-<key>.conf, its agent's
    (series.cloud.network).
    """
    state = layout.directory() / 'neutron'
    etc = layout.etc('neutron')
    shutil.copy(service_venv.path() / 'etc' / 'neutron' / 'api-paste.ini',
                etc / 'api-paste.ini')
    files = {f'macvtap-{host.key}.conf': macvtap_agent(host)
             for host in hosts.HOSTS}
    files['neutron.conf'] = common(state, f"""\
core_plugin = ml2
# Not for routers: neutron 29.0.0's port listing needs the port
# forwarding model, which only the router plugin's module loads.
service_plugins = router
auth_strategy = keystone
api_paste_config = {etc / 'api-paste.ini'}
rpc_workers = 1
rpc_state_report_workers = 1
""") + f"""\
[database]
connection = {layout.database_url('mae_neutron')}

{authtoken('neutron', 'network')}
{auth('nova', 'nova')}"""
    files['ml2_conf.ini'] = f"""\
[ml2]
type_drivers = flat
tenant_network_types =
mechanism_drivers = macvtap
extension_drivers = port_security

[ml2_type_flat]
flat_networks = {network.PHYSNET}
"""
    return files


# The privsep contexts of Neutron's agents (neutron/privileged).
NEUTRON_PRIVSEP = ('privsep', 'privsep_dhcp_release', 'privsep_ovs_vsctl',
                   'privsep_namespace', 'privsep_conntrack', 'privsep_link')


def macvtap_agent(host):
    """The macvtap agent of a compute host, read after neutron.conf."""
    conf = layout.etc('neutron') / f'macvtap-{host.key}.conf'
    return f"""\
[DEFAULT]
host = {host.name}

[macvtap]
physical_interface_mappings = {network.PHYSNET}:{network.lower_device(host)}

[agent]
# A new server's port goes active, and Nova starts the guest, once the
# agent has seen its macvtap device.
polling_interval = 1

[securitygroup]
# Macvtap filters nothing.
firewall_driver = noop

{privsep(conf, *NEUTRON_PRIVSEP)}"""


def uwsgi(name, module, env, pyargv='', processes=1):
    """One master and `processes` workers serving `module` on the
    service's port.
    """
    lines = ['[uwsgi]', f'http-socket = {layout.HOST}:{layout.PORTS[name]}',
             f'module = {module}', 'master = true',
             f'processes = {processes}',
             'threads = 1', 'enable-threads = true', 'lazy-apps = true',
             'die-on-term = true', 'need-app = true', 'buffer-size = 65535',
             # uWSGI's HTTP socket closes every connection after the
             # response: say so, or clients reuse it and get a reset.
             'add-header = Connection: close',
             # glanceclient uploads (Nova's snapshots) in 1 MiB chunks;
             # uWSGI refuses chunks of more than 1 MB by default.
             'chunked-input-limit = 16777216']
    lines += [f'env = {key}={value}' for key, value in env.items()]
    if pyargv:
        lines.append(f'pyargv = {pyargv}')
    return '\n'.join(lines) + '\n'


WSGI = {
    'keystone': ('keystone.wsgi.api:application',
                 lambda: {'OS_KEYSTONE_CONFIG_DIR': layout.etc('keystone')}),
    'placement': ('placement.wsgi.api:application',
                  lambda: {'OS_PLACEMENT_CONFIG_DIR':
                           layout.etc('placement')}),
    'nova-api': ('nova.wsgi.osapi_compute:application',
                 lambda: {'OS_NOVA_CONFIG_DIR': layout.etc('nova')}),
    'cinder-api': ('cinder.wsgi.api:application', dict),
    'glance-api': ('glance.wsgi.api:application',
                   lambda: {'OS_GLANCE_CONFIG_DIR': layout.etc('glance')}),
    'neutron-api': ('neutron.wsgi.api:application',
                    lambda: {'OS_NEUTRON_CONFIG_DIR': layout.etc('neutron'),
                             'OS_NEUTRON_CONFIG_FILES':
                             'neutron.conf;ml2_conf.ini'}),
}


def write_all():
    """Write every service's configuration; return the uwsgi ini paths
    by service name.
    """
    files = {'keystone': keystone(), 'placement': placement(),
             'cinder': {}, 'nova': {}, 'glance': {}, 'neutron': {}}
    for service in ('nova', 'cinder', 'glance', 'neutron'):
        layout.etc(service).mkdir(parents=True, exist_ok=True)
    files['nova'] = nova()
    files['cinder'] = cinder()
    files['glance'] = glance()
    files['neutron'] = neutron()
    for service, texts in files.items():
        layout.etc(service).mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            (layout.etc(service) / name).write_text(text)
    return {name: write_uwsgi(name) for name in WSGI}


def write_uwsgi(name, processes=1):
    """The uWSGI ini of the API service `name`; its path."""
    module, env = WSGI[name]
    pyargv = (f'--config-file {layout.etc("cinder") / "cinder.conf"}'
              if name == 'cinder-api' else '')
    ini = layout.etc('uwsgi') / f'{name}.ini'
    ini.parent.mkdir(parents=True, exist_ok=True)
    ini.write_text(uwsgi(name, module, env(), pyargv, processes))
    return ini
