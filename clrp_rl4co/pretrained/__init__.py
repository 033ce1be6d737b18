"""Shipped policies: ``<name>.pt`` (a policy ``state_dict``, loadable with ``weights_only=True``)
and ``<name>.json`` (class, constructor config, provenance).

Load one with ``DRLHQPolicy.from_pretrained("<name>")`` or ``clrp_rl4co.policies.load_policy``
(or a path); write one with ``policy.save_pretrained(path)``.
``clrp_rl4co.policies.shipped_models()`` lists the shipped names.
"""
