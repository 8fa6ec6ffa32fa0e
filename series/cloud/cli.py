"""tools/series cloud up|scenario|down|status."""

from series.cloud import deploy
from series.cloud import scenario


def main(action):
    if action == 'up':
        deploy.up()
    elif action == 'down':
        deploy.down()
    elif action == 'status':
        return deploy.print_status(deploy.status())
    elif action == 'scenario':
        return scenario.main()
    return 0
