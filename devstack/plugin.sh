#!/bin/bash
# devstack plugin: apply this repository's Nova, Cinder and os-traits
# series to the checkouts devstack installs, enable volume multiattach and
# point tempest at compute microversion 2.105.

MULTIATTACH_SERIES_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# A key of a project's section of projects.toml: `version` (the release
# its series applies to) or `release` (the version its patched tree must
# install as, where another series requires it; empty if none).
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

# The patched checkout of a project with a `release` in projects.toml
# (os-traits: Nova's series requires os-traits>=3.10.0 for its trait) is
# tagged with it. pbr versions a git checkout from its tags, and would
# make 3.9.0 plus the series 3.9.1.devN, which Nova's requirements refuse;
# on a tagged commit it gives the tag. The tag is local and annotated as
# the series' own, not an upstream release. (Exporting PBR_VERSION instead
# would version every project devstack installs after pre-install, Nova
# included, and is lost where pip_install runs pip through sudo.)
function _multiattach_series_tag_release {
    local project=$1 dir=$2 base release tagged
    base=$(_multiattach_series_conf "$project" version)
    release=$(_multiattach_series_conf "$project" release)
    [[ -n $release ]] || return 0
    if tagged=$(git -C "$dir" rev-parse -q --verify \
                "refs/tags/$release^{commit}"); then
        if [[ $tagged != $(git -C "$dir" rev-parse HEAD) ]]; then
            die $LINENO "$dir has a tag $release that is not on the" \
                "$project series' last commit. The plugin tags the patched" \
                "tree $release (the version Nova's series requires);" \
                "delete that tag (git -C $dir tag -d $release) and stack again."
        fi
        return 0
    fi
    echo "$project: tagging the patched tree $release for pbr" \
        "(the series' own tag, not an upstream release)"
    git -C "$dir" -c user.name=devstack -c user.email=devstack@localhost \
        tag -a "$release" \
        -m "$project $base with the volume-multiattach-enhancements series" \
        -m "Tagged $release by the series' devstack plugin, so that pbr
installs it as the version Nova's series requires. Not an upstream
release."
}

# Apply patches/<project> to the git checkout <dir> with git am, once.
function apply_multiattach_series {
    local project=$1 dir=$2
    local base release patches wanted applied
    base=$(_multiattach_series_conf "$project" version)
    release=$(_multiattach_series_conf "$project" release)
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
            _multiattach_series_tag_release "$project" "$dir"
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
    if [[ -n $release ]] &&
            git -C "$dir" rev-parse -q --verify "refs/tags/$release" >/dev/null; then
        die $LINENO "$dir already has a tag $release, the version the" \
            "$project series is to install as; not applying the series." \
            "Delete that tag (git -C $dir tag -d $release) to apply it."
    fi
    echo "$project: applying ${#patches[@]} patches of the" \
        "volume-multiattach-enhancements series to $dir"
    if ! git -C "$dir" -c user.name=devstack -c user.email=devstack@localhost \
            am --3way "${patches[@]}"; then
        git -C "$dir" am --abort
        die $LINENO "the $project series does not apply to $dir"
    fi
    _multiattach_series_tag_release "$project" "$dir"
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
