"""Where the real cloud keeps its files, and its ports, users and
databases. Everything lives under .work/cloud/ (the guest image under
.work/cloud/guest survives `cloud down`, as does the virtualenv).
"""

import json
import secrets

from series import config

HOST = '127.0.0.1'
PORTS = {'keystone': 18500, 'placement': 18501, 'nova-api': 18502,
         'cinder-api': 18503, 'glance-api': 18504, 'neutron-api': 18505,
         'ceph-mon': 18506}
REGION = 'RegionOne'
RABBIT_VHOST = 'mae'
DB_USER = 'mae'
DATABASES = ('mae_keystone', 'mae_placement', 'mae_nova_api', 'mae_nova',
             'mae_nova_cell0', 'mae_cinder', 'mae_glance', 'mae_neutron')
# The services that authenticate to Keystone, each a user of the
# `service` project with the admin and service roles.
SERVICE_USERS = ('nova', 'cinder', 'placement', 'glance', 'neutron')
# (type, name, path under its port) of every catalog entry.
CATALOG = (('identity', 'keystone', 'keystone', '/v3'),
           ('placement', 'placement', 'placement', ''),
           ('compute', 'nova', 'nova-api', '/v2.1'),
           ('block-storage', 'cinder', 'cinder-api', '/v3'),
           ('image', 'glance', 'glance-api', ''),
           ('network', 'neutron', 'neutron-api', ''))
PROJECT = 'mae'
MEMBER = 'mae'
ADMIN = 'admin'


def directory():
    return config.ROOT / '.work' / 'cloud'


def last_run():
    """Where `down` keeps the logs and reports of the cloud it removed."""
    return config.ROOT / '.work' / 'cloud-last'


# What `down` keeps of a cloud, in last_run().
KEPT_BY_DOWN = ('log', 'report.json', 'upgrade.json')


def etc(service=''):
    return directory() / 'etc' / service


def log(name):
    return directory() / 'log' / f'{name}.log'


def pid_file(name):
    return directory() / 'run' / f'{name}.pid'


def url(service, path=''):
    return f'http://{HOST}:{PORTS[service]}{path}'


def password_path():
    return directory() / 'password'


def password():
    """The password of every user and of the database user, made at the
    first `up` and kept until `down`. Hexadecimal, so that no command
    line takes it for an option and no URL, SQL or ini file needs it
    quoted.
    """
    path = password_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_text(secrets.token_hex(16) + '\n')
    return path.read_text().strip()


def database_url(name):
    return f'mysql+pymysql://{DB_USER}:{password()}@{HOST}/{name}'


def transport_url():
    return f'rabbit://guest:guest@{HOST}:5672/{RABBIT_VHOST}'


CLOUDS = """\
# Written by `tools/series cloud up`: openstack --os-cloud mae ...
clouds:
{clouds}"""


def clouds_yaml():
    entries = []
    for cloud, user, project in (('mae', MEMBER, PROJECT),
                                 ('mae-admin', ADMIN, 'admin')):
        entries.append(f"""\
  {cloud}:
    auth:
      auth_url: {url('keystone', '/v3')}
      username: {user}
      password: {password()}
      project_name: {project}
      user_domain_name: Default
      project_domain_name: Default
    region_name: {REGION}
    identity_api_version: 3
""")
    path = directory() / 'clouds.yaml'
    path.write_text(CLOUDS.format(clouds=''.join(entries)))
    path.chmod(0o600)
    return path


def write_json(path, data):
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + '\n')
