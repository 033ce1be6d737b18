"""What the package and its tools write about their results: Markdown tables
(:mod:`.markdown`) and where a result came from (:mod:`.provenance`: commit, machine, software,
command). Import the modules themselves (``from clrp_rl4co.reporting import provenance``)."""
