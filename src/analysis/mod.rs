//! Statistics and the scalability fit: small pure functions, each citing its method.
