#!/bin/bash
# devstack plugin: apply this repository's Nova, Cinder and os-traits
# series to the checkouts devstack installs, enable volume multiattach and
# point tempest at compute microversion 2.105.

MULTIATTACH_SERIES_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# A key of a project's section of projects.toml: `version` (the release
# its series applies to) or `installs-as` (the version its patched tree
# must install as, where another series requires it; empty if none).
function _multiattach_series_conf {
    awk -v section="[$1]" -v key="$2" '
        $0 == section {inside = 1; next}
        /^\[/ {inside = 0}
        inside && $1 == key {gsub(/"/, "", $3); print $3}
    ' "$MULTIATTACH_SERIES_REPO/projects.toml"
}

# The patch files of a series, in order.
function _multiattach_series_patches {
    local patches=$MULTIATTACH_SERIES_REPO/patches/$1 name
    [[ -f $patches/series ]] || return 0
    grep -v -e '^#' -e '^[[:space:]]*$' "$patches/series" |
        while read -r name _; do echo "$patches/$name"; done
}

# The patched checkout of a project with an `installs-as` in projects.toml
# (os-traits: Nova's series requires exactly that version) gets a PKG-INFO
# that names it. pbr takes a tree's version from its PKG-INFO before git, as
# in a release tarball; from git it would make 3.9.0 plus the series
# 3.9.1.devN, which Nova's requirements refuse, and a tag cannot carry the
# local version. (Exporting PBR_VERSION instead would version every project
# devstack installs after pre-install, Nova included, and is lost where
# pip_install runs pip through sudo.) The file is not tracked by git.
function _multiattach_series_version {
    local project=$1 dir=$2 version
    version=$(_multiattach_series_conf "$project" installs-as)
    [[ -n $version ]] || return 0
    echo "$project: the patched tree installs as $version (its PKG-INFO," \
        "for pbr)"
    printf 'Metadata-Version: 1.1\nName: %s\nVersion: %s\n' \
        "$project" "$version" > "$dir/PKG-INFO"
}

# Apply patches/<project> to the git checkout <dir> with git am, once.
function apply_multiattach_series {
    local project=$1 dir=$2
    local base patches wanted applied
    base=$(_multiattach_series_conf "$project" version)
    mapfile -t patches < <(_multiattach_series_patches "$project")
    [[ ${#patches[@]} -gt 0 ]] || return 0
    wanted=$(sed -n 's/^Change-Id: //p' "${patches[@]}")

    local variable=${project^^}
    local hint="Set ${variable//-/_}_BRANCH=$base, or MULTIATTACH_SERIES_FORCE=True to try anyway."
    if ! git -C "$dir" rev-parse -q --verify "refs/tags/$base" >/dev/null; then
        if [[ $MULTIATTACH_SERIES_FORCE != True ]]; then
            die $LINENO "$dir has no tag $base, the release the $project" \
                "series applies to. $hint"
        fi
    else
        applied=$(git -C "$dir" log --reverse --format=%B "$base..HEAD" |
                  sed -n 's/^Change-Id: //p')
        if [[ $applied == "$wanted" ]]; then
            echo "$project: the series is already applied in $dir"
            _multiattach_series_version "$project" "$dir"
            return 0
        fi
        if [[ $(git -C "$dir" rev-parse HEAD) != \
              $(git -C "$dir" rev-parse "$base^{commit}") &&
              $MULTIATTACH_SERIES_FORCE != True ]]; then
            die $LINENO "$dir is at" \
                "$(git -C "$dir" describe --tags --always HEAD), not at" \
                "$project $base, the release the series applies to. $hint"
        fi
    fi
    if [[ -n $(git -C "$dir" status --porcelain --untracked-files=no) ]]; then
        die $LINENO "$dir has uncommitted changes; not applying the series"
    fi
    echo "$project: applying ${#patches[@]} patches of the" \
        "volume-multiattach-enhancements series to $dir"
    if ! git -C "$dir" -c user.name=devstack -c user.email=devstack@localhost \
            am --3way "${patches[@]}"; then
        git -C "$dir" am --abort
        die $LINENO "the $project series does not apply to $dir"
    fi
    _multiattach_series_version "$project" "$dir"
}

if [[ $1 == stack ]]; then
    case $2 in
        pre-install)
            # Before devstack installs os-traits, Nova and Cinder: clone
            # them as devstack would (it keeps an existing checkout) and
            # patch.
            if [[ $RECLONE == True ]]; then
                die $LINENO "RECLONE=True would reset the patched checkouts"
            fi
            # os-traits is in LIBS_FROM_GIT (settings), whatever services
            # run here: install_libs installs this checkout, before
            # placement and Nova, which both need its new trait.
            git_clone_by_name os-traits
            apply_multiattach_series os-traits "${GITDIR["os-traits"]}"
            if is_service_enabled nova; then
                git_clone "$NOVA_REPO" "$NOVA_DIR" "$NOVA_BRANCH"
                apply_multiattach_series nova "$NOVA_DIR"
            fi
            if is_service_enabled cinder; then
                git_clone "$CINDER_REPO" "$CINDER_DIR" "$CINDER_BRANCH"
                apply_multiattach_series cinder "$CINDER_DIR"
            fi
            ;;
        install|post-config|extra)
            # devstack installs and configures the patched trees itself;
            # ENABLE_VOLUME_MULTIATTACH (settings) makes Cinder's
            # multiattach volume type.
            :
            ;;
        test-config)
            if is_service_enabled tempest; then
                iniset "$TEMPEST_CONFIG" compute-feature-enabled \
                    volume_multiattach True
                iniset "$TEMPEST_CONFIG" compute-feature-enabled \
                    volume_attach_read_only True
                iniset "$TEMPEST_CONFIG" compute max_microversion 2.105
            fi
            ;;
    esac
fi

if [[ $1 == unstack || $1 == clean ]]; then
    # The patched checkouts stay; clean.sh removes $DEST when asked to.
    :
fi
