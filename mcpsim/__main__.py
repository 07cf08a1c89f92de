from mcpsim.cli import main

main()
