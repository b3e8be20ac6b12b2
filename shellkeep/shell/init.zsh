# shellkeep shell integration for zsh, written by 'shellkeep init zsh'; do not edit.
# Builtins only at start-up and on cd: no process is started unless there is something to say.
typeset -ga __shellkeep_cmd
__shellkeep_cmd=(@SHELLKEEP@)
typeset -g __shellkeep_notices=@NOTICES@
typeset -g __shellkeep_last_root=
typeset -g __shellkeep_said=
@REFRESH@
__shellkeep_on_path() {  # $1: a program; is it on PATH? (a stat per folder; $commands would hash them all)
    local d
    for d in $path; do [[ -x $d/$1 && ! -d $d/$1 ]] && return 0; done
    return 1
}
# Not on PATH (a venv not activated): 'shellkeep' is this function, so the notice's advice and
# the completion work.
if ! __shellkeep_on_path shellkeep; then
    function shellkeep { "${__shellkeep_cmd[@]}" "$@"; }
    typeset -g __shellkeep_bin=@SHELLKEEP_BIN@
else
    unset __shellkeep_bin
fi
# Each program found on PATH runs under shellkeep; inside a recorded session (SHELLKEEP_SESSION
# is set by the recorder) it runs bare, and 'command NAME' always does.
@WRAPPERS@
# Completion of commands, session ids, config keys and agents (the script runs shellkeep on TAB only).
@COMPLETION@
if [[ -n ${__shellkeep_bin-} ]] && (( $+functions[_shellkeep_completion] && $+functions[compdef] )); then
    # the completion script runs 'shellkeep' by name: found in its folder, for the TAB only
    __shellkeep_complete() { local -x PATH="$__shellkeep_bin:$PATH"; _shellkeep_completion "$@"; }
    compdef __shellkeep_complete shellkeep
fi
__shellkeep_alive() {  # $1: a recorder's pid; is it still a shellkeep process?
    emulate -L zsh
    kill -0 "$1" 2>/dev/null || return 1
    [[ -r /proc/$1/cmdline ]] || return 0
    local arg
    while IFS= read -r -d '' arg; do
        [[ $arg == *shellkeep* ]] && return 0
    done < "/proc/$1/cmdline"
    return 1
}

__shellkeep_notice() {  # one line when this project has interrupted sessions; else silent
    emulate -L zsh
    if [[ ! -s $__shellkeep_notices ]]; then __shellkeep_last_root=; return 0; fi
    local here=${PWD:A}
    local d=$here
    while [[ ! -e $d/.git ]]; do  # the project: the git top-level, else this folder
        if [[ -z $d ]]; then d=$here; break; fi
        d=${d%/*}
    done
    local root=${d:-/}
    [[ $root == "$__shellkeep_last_root" ]] && return 0
    __shellkeep_last_root=$root
    local line r state pid bid host at agent id boot= newest_agent newest_at newest_id
    local -a f
    integer count=0
    for line in ${(f)"$(<$__shellkeep_notices)"}; do  # $(<file) reads without a process
        f=("${(@ps:\t:)line}")
        ((${#f} == 8)) || continue
        r=$f[1] state=$f[2] pid=$f[3] bid=$f[4] host=$f[5] at=$f[6] agent=$f[7] id=$f[8]
        [[ $r == "$root" || $r -ef $root ]] || continue
        if [[ $state == running ]]; then
            [[ $host == "$HOST" ]] || continue
            [[ -z $boot && -r /proc/sys/kernel/random/boot_id ]] && read -r boot < /proc/sys/kernel/random/boot_id
            if [[ $bid == - || -z $boot || $bid == "$boot" ]]; then
                __shellkeep_alive "$pid" && continue
            fi
        fi
        count+=1 newest_agent=$agent newest_at=$at newest_id=$id
    done
    ((count)) || return 0
    local said=$root$'\t'$count$'\t'$newest_id  # said once per project and set of sessions in this shell
    [[ $'\n'$__shellkeep_said$'\n' == *$'\n'"$said"$'\n'* ]] && return 0
    __shellkeep_said+=$said$'\n'
    local now=${(%):-"%D{%s}"} age=
    if [[ $now == <-> && $newest_at == <-> ]]; then
        integer s=$((now - newest_at))
        if ((s < 60)); then age=", ${s} s ago"
        elif ((s < 3600)); then age=", $((s / 60)) min ago"
        elif ((s < 86400)); then age=", $((s / 3600)) h ago"
        else age=", $((s / 86400)) d ago"; fi
    fi
    local plural=s; ((count == 1)) && plural=
    print -ru2 -- "shellkeep: $count interrupted session$plural in this project (newest: $newest_agent$age); resume with 'shellkeep resume $newest_id'"
}
# @notice-begin
# The notice on changing directory: a chpwd hook (never a per-prompt one).
typeset -ga chpwd_functions
chpwd_functions=(${chpwd_functions:#__shellkeep_notice} __shellkeep_notice)
[[ -o interactive ]] && __shellkeep_notice
# @notice-end
