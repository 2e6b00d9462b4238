-- Daemons check the schema's version before they use it.
GRANT SELECT ON ctxls_migrations TO ctxls_user;
