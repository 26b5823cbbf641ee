"""`python -m dsh_cli` is the `dsh` command."""

from dsh_cli.cli import main

if __name__ == "__main__":
    main()
