from rnnlab.worker.main import end, main

end(main())
