"""neutron-macvtap-agent as the cloud runs it (with the cloud
virtualenv's Python, as a script: it imports only Neutron).

Neutron 29.0.0's agent checks its interface mappings through privsep,
which starts the privsep daemon and a thread that reads its replies,
and then forks its worker (oslo.service's threading backend). The
worker inherits the daemon's socket but not the reading thread, and
waits forever on its first privileged call: the agent never reports.
Here the worker forgets the inherited clients, so that its first call
starts a daemon of its own.
"""

import os
import sys

from neutron.cmd.plugins import macvtap_neutron_agent
from neutron import privileged

CONTEXTS = (privileged.default, privileged.dhcp_release_cmd,
            privileged.ovs_vsctl_cmd, privileged.namespace_cmd,
            privileged.conntrack_cmd, privileged.link_cmd)


def forget_privsep_clients():
    for context in CONTEXTS:
        context.channel = None


if __name__ == '__main__':
    os.register_at_fork(after_in_child=forget_privsep_clients)
    sys.exit(macvtap_neutron_agent.main())
