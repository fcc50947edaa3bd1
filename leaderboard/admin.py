"""Admin for the model catalogue."""

from django.contrib import admin

from .models import ArenaModel, ModelAlias


class ModelAliasInline(admin.TabularInline):
    model = ModelAlias
    extra = 0
    fields = ("key", "note", "created_at")
    readonly_fields = ("created_at",)


@admin.register(ArenaModel)
class ArenaModelAdmin(admin.ModelAdmin):
    list_display = ("key", "display_name", "organization", "style", "visibility", "updated_at")
    list_filter = ("visibility", "style", "organization")
    search_fields = ("key", "display_name", "organization", "aliases__key")
    inlines = [ModelAliasInline]


@admin.register(ModelAlias)
class ModelAliasAdmin(admin.ModelAdmin):
    list_display = ("key", "model", "note", "created_at")
    search_fields = ("key", "model__key")
    autocomplete_fields = ("model",)
