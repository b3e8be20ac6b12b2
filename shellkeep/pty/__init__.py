"""Own the relay: spawn a program in a pty, raw mode, SIGWINCH, signals, exit status."""
