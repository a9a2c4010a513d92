"""The suggester's evaluation data and the tools that build it (``docs/corpus.md``): labelled calls
on real repositories (``intents/``), recorded agent runs (``trajectories/``), the checkout maker
(:mod:`corpus.checkout`) and the stub-workspace materializer (:mod:`corpus.materialize`).
Scored by :mod:`dsh_sidecar.evaluation`."""
