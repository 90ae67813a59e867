from .peer import main

main()
