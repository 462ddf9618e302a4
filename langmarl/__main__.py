"""``python -m langmarl`` runs the ``langmarl`` command."""

from langmarl.cli import main

if __name__ == "__main__":
    main()
