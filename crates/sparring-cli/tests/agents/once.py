"""What the test scripts that misbehave once share: the marker file.

Standard library only."""
import os


def claim(marker):
    """Whether this process makes the marker file. It is made atomically, so
    of processes reaching their fault together only one misbehaves; a
    restarted process finds it and behaves."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True
