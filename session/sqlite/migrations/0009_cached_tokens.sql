-- How much of an answer's prompt the provider read from its cache
-- (OpenAI's prompt_tokens_details.cached_tokens; issue 23); NULL when it
-- said nothing.
ALTER TABLE messages ADD COLUMN cached_tokens INTEGER;
