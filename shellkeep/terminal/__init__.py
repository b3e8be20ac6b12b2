"""The one terminal emulator over pyte: screens, snapshots, the last screen from a tail, transcripts."""
