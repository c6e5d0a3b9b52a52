"""The errors a modelled service raises: failures of the world, which the job must handle.

```
ServiceError             a call failed: a modelled error at the service's error rate
├── ServiceUnavailable   the service is in an outage
└── RateLimited          the call came over the service's rate limit
```

They are not lockgate's errors: a job sees them as it would see a remote service's, from
its own ``async_map`` function (retried by ``AsyncRetry``, or handled by ``on_failure``)
or from its sink (retried by the sink's ``retry``, or failing the attempt).
"""

from __future__ import annotations

__all__ = ["RateLimited", "ServiceError", "ServiceUnavailable"]


class ServiceError(Exception):
    """A call to a modelled service failed; the message names the service and the time."""


class ServiceUnavailable(ServiceError):
    """The modelled service is in an outage: the message says from when to when."""


class RateLimited(ServiceError):
    """The call came over the modelled service's rate limit (an HTTP 429, say)."""
