"""tools/series cloud up|scenario|upgrade|down|status."""

from series.cloud import deploy
from series.cloud import scenario
from series.cloud import upgrade


def main(action):
    if action == 'up':
        deploy.up()
    elif action == 'down':
        deploy.down()
    elif action == 'status':
        return deploy.print_status(deploy.status())
    elif action == 'scenario':
        return scenario.main()
    elif action == 'upgrade':
        return upgrade.main()
    return 0
