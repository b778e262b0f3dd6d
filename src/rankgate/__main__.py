from rankgate.cli import main

raise SystemExit(main())
