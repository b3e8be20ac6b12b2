# shellkeep shell integration for bash, written by 'shellkeep init bash'; do not edit.
# Builtins only at start-up and on cd: no process is started unless there is something to say.
__shellkeep_cmd=(@SHELLKEEP@)
__shellkeep_notices=@NOTICES@
__shellkeep_last_root=
__shellkeep_said=
@REFRESH@
# Not on PATH (a venv not activated): 'shellkeep' is this function, so the notice's advice and
# the completion work; 'type -P' is a builtin, no process.
if ! type -P shellkeep >/dev/null; then
    function shellkeep { "${__shellkeep_cmd[@]}" "$@"; }
    __shellkeep_bin=@SHELLKEEP_BIN@
else
    unset __shellkeep_bin
fi
# Each program found on PATH runs under shellkeep; inside a recorded session (SHELLKEEP_SESSION
# is set by the recorder) it runs bare, and 'command NAME' always does.
@WRAPPERS@
# Completion of commands, session ids, config keys and agents (the script runs shellkeep on TAB only).
@COMPLETION@
if [[ -n ${__shellkeep_bin-} ]] && declare -F _shellkeep_completion >/dev/null; then
    # the completion script runs 'shellkeep' by name: found in its folder, for the TAB only
    __shellkeep_complete() { local -x PATH="$__shellkeep_bin:$PATH"; _shellkeep_completion "$@"; }
    complete -o nosort -F __shellkeep_complete shellkeep
fi
__shellkeep_alive() {  # $1: a recorder's pid; is it still a shellkeep process?
    kill -0 "$1" 2>/dev/null || return 1
    [[ -r /proc/$1/cmdline ]] || return 0
    local arg
    while IFS= read -r -d '' arg; do
        [[ $arg == *shellkeep* ]] && return 0
    done < "/proc/$1/cmdline"
    return 1
}

__shellkeep_notice() {  # one line when this project has interrupted sessions; else silent
    if [[ ! -s $__shellkeep_notices ]]; then __shellkeep_last_root=; return 0; fi
    local d=$PWD
    while [[ ! -e $d/.git ]]; do  # the project: the git top-level, else this folder
        if [[ -z $d ]]; then d=$PWD; break; fi
        d=${d%/*}
    done
    local root=${d:-/}
    [[ $root == "$__shellkeep_last_root" ]] && return 0
    __shellkeep_last_root=$root
    local r state pid bid host at agent id boot= count=0 newest_agent newest_at newest_id
    while IFS=$'\t' read -r r state pid bid host at agent id; do
        [[ -n $id ]] || continue  # a line that lacks fields
        [[ $r == "$root" || $r -ef $root ]] || continue
        if [[ $state == running ]]; then
            [[ $host == "$HOSTNAME" ]] || continue
            [[ -z $boot && -r /proc/sys/kernel/random/boot_id ]] && read -r boot < /proc/sys/kernel/random/boot_id
            if [[ $bid == - || -z $boot || $bid == "$boot" ]]; then
                __shellkeep_alive "$pid" && continue
            fi
        fi
        count=$((count + 1)) newest_agent=$agent newest_at=$at newest_id=$id
    done < "$__shellkeep_notices"
    ((count)) || return 0
    local said=$root$'\t'$count$'\t'$newest_id  # said once per project and set of sessions in this shell
    [[ $'\n'$__shellkeep_said$'\n' == *$'\n'"$said"$'\n'* ]] && return 0
    __shellkeep_said+=$said$'\n'
    local now= age=
    printf -v now '%(%s)T' -1 2>/dev/null
    if [[ $now == [0-9]* && $newest_at == [0-9]* ]]; then
        local s=$((now - newest_at))
        if ((s < 60)); then age=", ${s} s ago"
        elif ((s < 3600)); then age=", $((s / 60)) min ago"
        elif ((s < 86400)); then age=", $((s / 3600)) h ago"
        else age=", $((s / 86400)) d ago"; fi
    fi
    local plural=s; ((count == 1)) && plural=
    printf "shellkeep: %s interrupted session%s in this project (newest: %s%s); resume with 'shellkeep resume %s'\n" \
        "$count" "$plural" "$newest_agent" "$age" "$newest_id" >&2
}
# @notice-begin
# The notice on changing directory, in an interactive shell: cd, pushd and popd are wrapped
# (none is a per-prompt hook), unless they are functions already.
if [[ $- == *i* ]]; then
    if ! declare -F cd >/dev/null; then
        function cd { builtin cd "$@" || return; __shellkeep_notice; }
    fi
    if ! declare -F pushd >/dev/null; then
        function pushd { builtin pushd "$@" || return; __shellkeep_notice; }
    fi
    if ! declare -F popd >/dev/null; then
        function popd { builtin popd "$@" || return; __shellkeep_notice; }
    fi
    __shellkeep_notice
fi
# @notice-end
