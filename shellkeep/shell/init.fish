# shellkeep shell integration for fish, written by 'shellkeep init fish'; do not edit.
# Builtins only at start-up and on cd: no process is started unless there is something to say.
set -g __shellkeep_cmd @SHELLKEEP@
set -g __shellkeep_notices @NOTICES@
set -g __shellkeep_last_root ''
set -q __shellkeep_said; or set -g __shellkeep_said
@REFRESH@
# Not on PATH (a venv not activated): 'shellkeep' is this function, so the notice's advice and
# the completion work; 'command -q' is a builtin, no process.
if not command -q shellkeep
    function shellkeep --description 'shellkeep, from where the shell integration was made'
        $__shellkeep_cmd $argv
    end
    set -g __shellkeep_bin @SHELLKEEP_BIN@
else
    set -e __shellkeep_bin
end
# Each program found on PATH runs under shellkeep; inside a recorded session (SHELLKEEP_SESSION
# is set by the recorder) it runs bare, and 'command NAME' always does.
@WRAPPERS@
# Completion of commands, session ids, config keys and agents (the script runs shellkeep on TAB only).
@COMPLETION@
if functions -q _shellkeep_completion  # in shellkeep's order (sessions newest first), not sorted by fish
    complete --erase --command shellkeep
    complete --no-files --keep-order --command shellkeep --arguments "(_shellkeep_completion)"
end
if set -q __shellkeep_bin; and test -n "$__shellkeep_bin"; and functions -q _shellkeep_completion
    # the completion script (just sourced) runs 'shellkeep' by name: found in its folder, for the TAB only
    functions -e __shellkeep_completion_by_name
    functions --copy _shellkeep_completion __shellkeep_completion_by_name
    function _shellkeep_completion
        set -lx PATH $__shellkeep_bin $PATH
        __shellkeep_completion_by_name
    end
end
function __shellkeep_alive --argument-names pid  # is this recorder still a shellkeep process?
    if test -d /proc/self
        test -r /proc/$pid/cmdline; or return 1
        while read -z -l arg
            string match -q '*shellkeep*' -- $arg; and return 0
        end < /proc/$pid/cmdline
        return 1
    end
    command kill -0 $pid 2>/dev/null  # no /proc: one process, only for a running session here
end

function __shellkeep_notice  # one line when this project has interrupted sessions; else silent
    if not test -s "$__shellkeep_notices"
        set -g __shellkeep_last_root ''
        return 0
    end
    set -l here (builtin realpath "$PWD")
    set -l d "$here"
    while not test -e "$d/.git"  # the project: the git top-level, else this folder
        if test -z "$d"
            set d "$here"
            break
        end
        set d (string replace -r '/[^/]*$' '' -- "$d")
    end
    set -l root "$d"
    test -n "$root"; or set root /
    test "$root" = "$__shellkeep_last_root"; and return 0
    set -g __shellkeep_last_root "$root"
    set -l boot ''
    set -l count 0
    set -l newest_agent ''
    set -l newest_at ''
    set -l newest_id ''
    while read -l --delimiter \t r state pid bid host at agent id
        test -n "$id"; or continue  # a line that lacks fields
        test "$r" = "$root"; or continue
        if test "$state" = running
            test "$host" = "$hostname"; or continue
            if test -z "$boot"; and test -r /proc/sys/kernel/random/boot_id
                read boot < /proc/sys/kernel/random/boot_id
            end
            if test "$bid" = -; or test -z "$boot"; or test "$bid" = "$boot"
                __shellkeep_alive $pid; and continue
            end
        end
        set count (math $count + 1)
        set newest_agent $agent
        set newest_at $at
        set newest_id $id
    end < $__shellkeep_notices
    test $count -gt 0; or return 0
    set -l said "$root"\t"$count"\t"$newest_id"  # said once per project and set of sessions in this shell
    contains -- $said $__shellkeep_said; and return 0
    set -g -a __shellkeep_said $said
    set -l age ''
    set -l now (date +%s 2>/dev/null)  # a process, but only when there is something to say
    if string match -qr '^[0-9]+$' -- "$now"; and string match -qr '^[0-9]+$' -- "$newest_at"
        set -l s (math $now - $newest_at)
        if test $s -lt 60
            set age ", $s s ago"
        else if test $s -lt 3600
            set age ", "(math --scale=0 $s / 60)" min ago"
        else if test $s -lt 86400
            set age ", "(math --scale=0 $s / 3600)" h ago"
        else
            set age ", "(math --scale=0 $s / 86400)" d ago"
        end
    end
    set -l plural s
    test $count -eq 1; and set plural ''
    printf "shellkeep: %s interrupted session%s in this project (newest: %s%s); resume with 'shellkeep resume %s'\n" \
        $count $plural $newest_agent $age $newest_id >&2
end
# @notice-begin
# The notice on changing directory: a PWD variable hook (never a per-prompt one).
if status is-interactive
    function __shellkeep_on_pwd --on-variable PWD
        __shellkeep_notice
    end
    __shellkeep_notice
end
# @notice-end
