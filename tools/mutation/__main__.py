from tools.mutation.run import main

raise SystemExit(main())
