"""What the real cloud holds for its runs, by name: the guest's images,
the flavors and the volume types (`cloud up` makes them; the steps,
clients and upstream tests use them).
"""

IMAGE = 'mae-guest'
# The same guest for tempest, whose servers have a port: Nova gives each
# a config drive, from which the guest takes its address and SSH keys.
SSH_IMAGE = 'mae-guest-ssh'
# The same guest again under the name python-openstackclient's functional
# tests look for (devstack's cirros image, cirros-*-disk), and a flavor
# of devstack's they take (series.cloud.osc_functional).
OSC_IMAGE = 'cirros-named-mae-guest-disk'
OSC_FLAVOR = 'cirros256'
IMAGES = {IMAGE: {}, SSH_IMAGE: {'img_config_drive': 'mandatory'},
          OSC_IMAGE: {}}
FLAVORS = (('mae.tiny', 128), ('mae.small', 192), (OSC_FLAVOR, 256))
VOLUME_TYPE = 'multiattach'
# Volumes of this type are on Cinder's second backend: retyping an
# attached volume to it migrates the volume through Nova's swap volume.
OTHER_POOL_TYPE = 'other-pool'
