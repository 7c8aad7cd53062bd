from receco_agent.cli import main

raise SystemExit(main())
