from memvault.hook import main

raise SystemExit(main())
