"""The scenario's fixed values: microversion, image, hosts and timeouts."""

MICROVERSION = '2.105'
IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'  # GlanceFixture's cirros
COMPUTES = ('compute-a', 'compute-b', 'compute-c')
SPARE_VOLUMES = ('spare-1', 'spare-2', 'spare-3')
WAIT_SECONDS = 60
