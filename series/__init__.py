"""tools/series, the patch queue tool, as a package: one module per concern.

tools/series only puts the repository on sys.path and calls cli.main().
Modules import each other as modules (config.ROOT, queue.apply), so a
test patches one attribute in one place and every module sees it.

  config     ROOT (the repository, or $SERIES_ROOT), Project and
             projects.toml, SeriesError (a problem the user must fix)
  process    say, run, git: running commands; background(): a command
             that takes only the CPU other sessions leave
  pristine   the pinned base: the sdist verified against its sha256,
             unpacked, and made a git repository (tag `base`)
  queue      the patch queue: the series file, the work tree, apply,
             export, status, rpm-patches
  identity   who a patch is by: placeholder identities, which `check
             --upstream` refuses, and sign (every commit made yours)
  requirement_forms
             the requirement lines a series adds, here (the patched
             tree's local version) and upstream (export --upstream)
  checks     check: commit-message rules, series against patch files,
             clean application with patch -p1, git am and quilt
  rebase     a series moved onto another release (git am -3), pinned
             only when the result checks clean
  virtualenvs
             each project's test virtualenv, pinned by upper-constraints
  selection  the tests that cover what the series changes
  suites     what runs and is counted (SuiteResult): stestr suites,
             this repository's own tests, bench, and the summary table
  linters    the static checks: flake8, lint commands, mypy (SuiteResult)
  released_requirement
             a client's tests run against the released library its series
             patches (the verified sdist first on sys.path)
  each       every commit with only the commits before it: the tests
             it adds or changes and flake8, in a worktree of the commit
  test_ids   this repository's tests run by id, each test's status
             printed as JSON (the tool mutants' runs)
  mutants    mutants.toml: each guard of the series (or of the tool's
             checks) removed in turn, and the tests that must fail with
             it run
  patched_docs
             sphinx-build -W of the patched projects' docs and release
             notes
  contract   the contract suite on the release and on the patched tree
  spec       the specs in specs/ (Nova's, Cinder's): title checks,
             sphinx -W
  package_imports
             what each module imports of the package, read from the
             source, for the manual's drawing of the package
  manual     this repository's manual, doc/source: sphinx -W, pages
             reachable, verbs named existing, the patch lists
  demo       the main job: the demo scenario, by hand or end to end
  cloud      the real cloud, a package: guest (its guest image: a kernel
             and a busybox initramfs that report whether each disk takes
             writes), ceph (its Ceph in user space: one monitor, manager
             and OSD, started and stopped by PID), service_venv (the
             services' virtualenv), layout (paths, ports, users),
             configs, services (processes by PID), hosts and network (the
             compute hosts' namespaces and the servers' network,
             macvtap_agent), client and rest (REST), releases (pristine
             or series), deploy (up, down, status), probes and rbd_probe
             (libvirt XML, QMP, RBD), ledger (what the scenario made
             against what the cloud holds), tracker (what a run made and
             expects, its report), attachment_checks (each attachment
             from five places), steps (running a step), fault_aftermath
             (what a fault left, cleaned), faults, attach_steps,
             move_steps, prefilter_step (the scenario's steps), tempest,
             sdk_functional and osc_functional (openstacksdk's and
             python-openstackclient's functional tests), scenario,
             databases, upgrade_phases, upgrade (the rolling upgrade),
             cli
  ci         everything CI runs, including a standalone clone
  cli        the command line: build_parser(), and per verb a function
             and the add_<verb>() that makes its parser

A module imports only modules above it in this list, so there are no
import cycles. series/tests/ holds the unit tests, one test module per
module tested (test_<module>.py) and the shared fixture (tests/base.py).
"""
