"""``python -m langmarl.cli`` runs the ``langmarl`` command."""

from langmarl.cli import main

main()
