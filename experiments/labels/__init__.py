"""Expert labels for imitation: instances drawn from a preset and solved by the package's own
PyVRP solver at a stated budget, stored as env action sequences in checksummed ``.npz`` shards
(``datasets/labels/<preset>/``). ``python -m experiments.labels make | status | verify``."""
