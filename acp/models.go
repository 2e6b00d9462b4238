package acp

import (
	"context"
	"slices"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ctxls/ctxls/api"
)

// The session's model is a config option of category "model" (the model
// selector ACP clients show): its values are the provider's models
// (ctxls.models.list), the current one the session's; choosing one is
// ctxls.session.setModel.

// modelOptionID is the model option's id.
const modelOptionID = "model"

// modelsTTL is how long the provider's list of models is kept.
const modelsTTL = 5 * time.Minute

// modelsWait bounds how long opening a session waits for the list.
const modelsWait = 3 * time.Second

// modelCache is the provider's models, as last asked.
type modelCache struct {
	mu     sync.Mutex
	models []string
	at     time.Time
}

// configOptions are the session's config options: its model.
func (a *Agent) configOptions(ctx context.Context, id string) []sdk.SessionConfigOption {
	a.models.mu.Lock()
	models, fresh := a.models.models, time.Since(a.models.at) < modelsTTL
	a.models.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, modelsWait)
	defer cancel()
	res, err := a.svc.ModelsList(ctx, &api.SessionIDArgs{SessionID: id})
	current := ""
	switch {
	case err == nil:
		current = res.Current
		if !fresh {
			models = res.Models
			a.models.mu.Lock()
			a.models.models, a.models.at = models, time.Now()
			a.models.mu.Unlock()
		}
	default:
		if s, serr := a.svc.Session(ctx, id); serr == nil {
			current = s.Meta.Model
		}
	}
	desc := "The model this session's turns use"
	var opts sdk.SessionConfigSelectOptionsUngrouped
	switch {
	case current == "" && len(models) == 0:
		return nil // no provider, no model: nothing to choose from
	case current == "":
		// A server and no model configured: its models to choose from,
		// under a first entry that says none is chosen (the selector
		// needs a current value; choosing that one chooses nothing).
		desc = "No model is configured (--model, CTXLS_MODEL): choose one of the server's for this session's turns"
		opts = append(opts, sdk.SessionConfigSelectOption{Value: "", Name: "Choose a model"})
	case !slices.Contains(models, current):
		models = append([]string{current}, models...)
	}
	for _, m := range models {
		opts = append(opts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m), Name: m})
	}
	category := sdk.SessionConfigOptionCategoryModel
	return []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{
		Id: modelOptionID, Name: "Model", Description: &desc, Category: &category, Type: "select",
		CurrentValue: sdk.SessionConfigValueId(current), Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts},
	}}}
}

// SetSessionConfigOption sets the session's model.
func (a *Agent) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	v := p.ValueId
	if v == nil || v.ConfigId != modelOptionID {
		return sdk.SetSessionConfigOptionResponse{}, invalid(`the only config option is "model"`)
	}
	s, err := a.opened(ctx, v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	if _, err := a.svc.SessionSetModel(ctx, &api.SetModelArgs{SessionID: s.id, Model: string(v.Value)}); err != nil {
		return sdk.SetSessionConfigOptionResponse{}, rpcError(err)
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: a.configOptions(ctx, s.id)}, nil
}
